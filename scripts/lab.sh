#!/usr/bin/env bash
# The main job: install elelem-kernel and the Elelem kernel, then open JupyterLab on
# notebooks/ (bound to 127.0.0.1). With no API key configured, the demo model answers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh lab
.venv/bin/elelem-kernel install --sys-prefix
if [ -z "${ANTHROPIC_API_KEY:-}${OPENAI_API_KEY:-}${ELELEM_PROVIDER:-}" ]; then
  echo "elelem: no ANTHROPIC_API_KEY or OPENAI_API_KEY set: the notebooks use the offline demo model" >&2
fi
# JupyterLab's terminals run `elelem-kernel` and `jupyter` from .venv, as the notebooks do:
# the venv goes first on the server's PATH, and a terminal is a plain interactive shell
# (a login shell would read /etc/profile, which resets PATH).
export VIRTUAL_ENV="$PWD/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"
echo "elelem: JupyterLab's terminals have .venv/bin on their PATH; elsewhere run" \
  "'source .venv/bin/activate' first" >&2
# notebooks/ is its own workspace (notebooks/.elelem-workspace), for the notebooks, the
# terminal and the CLI alike (elelem_kernel/tools/workspace.py: find_root).
root=()
[ "$(id -u)" = 0 ] && root=(--allow-root)
exec jupyter lab --ip 127.0.0.1 --ServerApp.root_dir=notebooks \
  --ServerApp.terminado_settings=shell_command="${SHELL:-/bin/bash}" "${root[@]}" "$@"
