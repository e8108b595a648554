#!/usr/bin/env bash
# Installs web3.py for tests/eth_clients.rs: a venv at <target dir>/eth-venv with the pinned
# packages of tests/eth/requirements.txt. The last line on stdout is the venv's python.
# (tests/support/install-python.sh does the work.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../support/install-python.sh" "$here/requirements.txt" eth-venv "web3" "Ethereum client venv"
