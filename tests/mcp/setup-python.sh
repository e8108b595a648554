#!/usr/bin/env bash
# Installs the official MCP Python SDK for the MCP tests (tests/mcp_sdk_clients.rs): a venv at
# <target dir>/mcp-venv with the pinned packages of tests/mcp/requirements.txt. The last line
# on stdout is the venv's python. (tests/support/install-python.sh does the work.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../support/install-python.sh" "$here/requirements.txt" mcp-venv \
  "mcp, mcp.client.stdio, mcp.client.streamable_http, httpx2" "MCP venv"
