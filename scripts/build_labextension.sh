#!/usr/bin/env bash
# Build the JupyterLab / Notebook 7 extension (labextension/, TypeScript) into
# elelem_kernel/labextension/ and make the venv's JupyterLab find it there, as
# `jupyter labextension develop` would (a link, so an editable install sees rebuilds).
# Wheels build it themselves (the jupyter-builder hook in pyproject.toml); `pip install -e`
# builds it too when node is here, but copies it into the venv: this replaces the copy
# with the link.
# Needs node >= 18 and npm; without them it says so and changes nothing: elelem then
# restores conversations from the saved notebook file only (README, "Restoring").
# Usage: bash scripts/build_labextension.sh [VENV]   (default .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(cd "${1:-.venv}" && pwd)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: node/npm not found: skipping the JupyterLab extension (install Node.js 20" \
    "and run 'bash scripts/build_labextension.sh'); restore works from saved notebooks only" >&2
  exit 0
fi
built=elelem_kernel/labextension/package.json
sources=(labextension/src labextension/package.json labextension/package-lock.json labextension/tsconfig.json)
if [ -f "$built" ] && [ -z "$(find "${sources[@]}" -newer "$built" -print -quit)" ]; then
  echo "setup: the JupyterLab extension is built ($built is newer than its sources)" >&2
else
  echo "setup: building the JupyterLab extension (npm ci, tsc, jupyter labextension build)" >&2
  (
    cd labextension
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    PATH="$venv/bin:$PATH" npm run --silent build:prod >/dev/null
  )
fi
target="$venv/share/jupyter/labextensions/elelem-kernel"
mkdir -p "$(dirname "$target")"
if [ -d "$target" ] && [ ! -L "$target" ]; then
  rm -rf "$target"  # the copy an editable install's shared-data made
fi
ln -sfn "$PWD/elelem_kernel/labextension" "$target"
