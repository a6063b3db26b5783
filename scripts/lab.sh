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
# The notebooks' workspace is their own folder, as for a person who downloaded them, not
# the repository around it (elelem_kernel/tools/workspace.py: find_root).
export ELELEM_WORKSPACE_CEILING="$PWD/notebooks"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-root)
exec .venv/bin/jupyter lab --ip 127.0.0.1 --ServerApp.root_dir=notebooks "${root[@]}" "$@"
