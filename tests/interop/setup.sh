#!/usr/bin/env bash
# Installs the Python peers of the interop tests (tests/example_*.rs): a venv at
# <target dir>/interop-venv with the pinned packages of tests/interop/requirements.txt. The
# last line on stdout is the venv's python. (tests/support/install-python.sh does the work.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../support/install-python.sh" "$here/requirements.txt" interop-venv \
  "pylsp_jsonrpc.endpoint, pylsp_jsonrpc.streams, ujson, requests, websockets" "interop venv"
