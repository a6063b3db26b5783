#!/usr/bin/env bash
# A venv of its own for JupyterLab with jupyter-collaboration (real-time collaboration),
# with this package installed editable beside it, for the two-browser RTC test. Installing
# jupyter-collaboration into .venv would turn every other browser test's notebook into a
# shared document, so it lives apart. Made once in .cache/rtc-venv; rerun to repair.
set -euo pipefail
cd "$(dirname "$0")/.."
# rfc3987: see the test extra in pyproject.toml (a faster Jupyter server start)
pins="jupyter-collaboration==5.0.4 jupyterlab>=4.4,<5 notebook>=7.4 rfc3987>=1.3"
venv=.cache/rtc-venv
stamp="$venv/.installed"
want="$pins $(pwd)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/jupyter-lab" ]; then
  exit 0
fi
python=${PYTHON:-python3}
echo "setup: creating $venv (jupyter-collaboration for the real-time collaboration test)" >&2
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check $pins \
  hatchling hatch-jupyter-builder editables
# the JupyterLab extension is built already (scripts/setup.sh); no build isolation needed
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation -e .
echo "$want" > "$stamp"
