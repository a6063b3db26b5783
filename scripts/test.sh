#!/usr/bin/env bash
# Run the whole test suite from nothing: set up .venv with the test extras, lint, type-check, test.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh -m "not browser" -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check elelem_kernel tests bench
.venv/bin/ruff format --check elelem_kernel tests bench
.venv/bin/python -m mypy  # the package's types, as [tool.mypy] in pyproject.toml says
exec .venv/bin/python -m pytest "$@"
