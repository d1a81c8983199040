#!/usr/bin/env bash
# Makes bench/agentdojo/.venv with the pinned AgentDojo and MCP SDK. Its own step: never part of
# `cargo test` or .ci/run (it needs PyPI).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3.11}"
if [ ! -x "$here/.venv/bin/python" ]; then
  "$python" -m venv "$here/.venv"
fi
"$here/.venv/bin/pip" install --quiet --upgrade pip
"$here/.venv/bin/pip" install --quiet -r "$here/requirements.txt" -c "$here/constraints.txt"
"$here/.venv/bin/python" -c 'import agentdojo, mcp; from importlib.metadata import version; print("agentdojo", version("agentdojo"), "mcp", version("mcp"))'
