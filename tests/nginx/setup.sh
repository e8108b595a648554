#!/usr/bin/env bash
# Makes sure Debian's nginx is installed (the TLS tests start their own, with their own
# configuration, on loopback ports); prints its path on the last line. Idempotent.
set -euo pipefail
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  bash "$(dirname "$0")/../support/install-debian.sh" nginx
fi
if command -v nginx >/dev/null 2>&1; then command -v nginx; else echo /usr/sbin/nginx; fi
