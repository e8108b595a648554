#!/usr/bin/env bash
# Installs the Node.js Ethereum clients of tests/eth_clients.rs (viem and ethers.js), pinned by
# tests/eth/node/package-lock.json, into <target dir>/eth-node. The last line on stdout is the
# node_modules directory (for NODE_PATH). (tests/support/install-node.sh does the work.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../support/install-node.sh" "$here/node" eth-node viem "Ethereum client node modules"
