#!/usr/bin/env bash
# A venv of its own for jupyter-ai 3 (its chat runs ACP agents as personas), with this
# package installed editable beside it, for the @Elelem browser test. jupyter-ai 3 pulls
# fastmcp, which pins mcp<2 while elelem-kernel's test extra needs mcp>=2.3, so the two
# cannot share .venv. Made once in .cache/jupyter-ai-venv; rerun to repair.
set -euo pipefail
cd "$(dirname "$0")/.."
# rfc3987: see the test extra in pyproject.toml (a faster Jupyter server start)
pins="jupyter-ai==3.2.0 jupyter-ai-acp-client==0.3.3 jupyterlab>=4.4,<5 rfc3987>=1.3"
venv=.cache/jupyter-ai-venv
stamp="$venv/.installed"
want="$pins $(pwd)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/jupyter-lab" ]; then
  exit 0
fi
python=${PYTHON:-python3}
echo "setup: creating $venv (jupyter-ai 3 for the @Elelem browser test)" >&2
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check $pins \
  hatchling hatch-jupyter-builder editables
# the JupyterLab extension is built already (scripts/setup.sh); no build isolation needed
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation -e ".[acp]"
echo "$want" > "$stamp"
