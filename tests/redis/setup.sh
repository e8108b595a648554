#!/usr/bin/env bash
# Makes sure Debian's redis-server is installed (the fleet tests start their own servers on
# loopback ports, without persistence); prints its path on the last line. Idempotent.
set -euo pipefail
if ! command -v redis-server >/dev/null 2>&1; then
  bash "$(dirname "$0")/../support/install-debian.sh" redis-server
fi
command -v redis-server
