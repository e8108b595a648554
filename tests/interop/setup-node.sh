#!/usr/bin/env bash
# Installs the Node.js peers of the interop tests (tests/interop_vscode_jsonrpc.rs):
# vscode-jsonrpc, pinned by tests/interop/node/package-lock.json, into
# <target dir>/interop-node. The last line on stdout is the node_modules directory (for
# NODE_PATH). (tests/support/install-node.sh does the work.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../support/install-node.sh" "$here/node" interop-node vscode-jsonrpc "interop node modules"
