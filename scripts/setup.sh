#!/usr/bin/env bash
# Set up a fresh machine for elelem-kernel: a venv in .venv with the package (editable)
# and the extras named in $1 ("lab" or "test"). With "test", also Debian's chromium and its
# headless shell (the browser tests run the shell: tests/e2e/browser/conftest.py), ripgrep
# (the grep tool is checked against it) and faketime (to run the tests under a moved clock,
# README "Development"), when we are root.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-lab}"

if [ "$extra" = test ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  missing=""
  for pkg in chromium chromium-headless-shell ripgrep git faketime; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
  done
  if [ -n "$missing" ]; then
    echo "setup: installing$missing (apt)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$python" -m venv .venv
fi
# pip is quiet (-q): say what it does and how long it takes, so the wait is not silence
echo "setup: installing elelem-kernel[$extra] and its dependencies into .venv with pip" \
  "(on a fresh machine about 1-2 minutes for lab, 3-5 for test; then quick)" >&2
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extra]"
echo "setup: elelem-kernel[$extra] installed" >&2

# The npm MCP servers the tests run (versions pinned by .cache/mcp-npm/package-lock.json).
if [ "$extra" = test ] && command -v npm >/dev/null 2>&1; then
  (cd .cache/mcp-npm && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "setup: npm ci in .cache/mcp-npm failed; the MCP tests that need node will skip" >&2
  # The ACP TypeScript SDK, whose client drives `elelem-kernel acp` (tests/acp/ts_client.mjs).
  (cd .cache/acp-npm && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "setup: npm ci in .cache/acp-npm failed; the TypeScript ACP client test will skip" >&2
  # configurable-http-proxy for the JupyterHub test (pinned by .cache/hub-npm/package-lock.json).
  (cd .cache/hub-npm && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "setup: npm ci in .cache/hub-npm failed; the JupyterHub test will skip" >&2
fi

# The JupyterLab extension (labextension/), built from source when node is here.
if [ -x .venv/bin/jupyter-labextension ]; then
  bash scripts/build_labextension.sh .venv
fi

# jupyter-ai 3 in a venv of its own (it pins mcp<2), for the @Elelem browser test.
if [ "$extra" = test ]; then
  bash scripts/jupyter_ai_venv.sh ||
    echo "setup: scripts/jupyter_ai_venv.sh failed; the jupyter-ai browser test will fail in CI" >&2
  # jupyter-collaboration in a venv of its own (it makes every notebook a shared document)
  bash scripts/rtc_venv.sh ||
    echo "setup: scripts/rtc_venv.sh failed; the collaboration browser test will fail in CI" >&2
fi
