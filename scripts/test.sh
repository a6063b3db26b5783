#!/usr/bin/env bash
# Run the whole test suite from nothing: set up .venv with the test extras, lint, type-check, test.
#
# The tests run in parallel (pytest-xdist, ELELEM_TEST_WORKERS processes, default 4; whole
# files to a worker, so a module's kernel or JupyterLab is started once). tests/conftest.py
# orders the files: the slow ones first, the browser files last, each worker that gets one
# starting its own JupyterLab and Chromium. Extra arguments go to pytest (e.g.
# `bash scripts/test.sh -m "not browser" -x` or `bash scripts/test.sh tests/test_cli.py`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check elelem_kernel tests bench
.venv/bin/ruff format --check elelem_kernel tests bench
.venv/bin/python -m mypy  # the package's types, as [tool.mypy] in pyproject.toml says
exec .venv/bin/python -m pytest -n "${ELELEM_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder "$@"
