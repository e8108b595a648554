#!/usr/bin/env bash
# Makes sure Debian's nginx is installed (the TLS tests start their own, with their own
# configuration, on loopback ports); prints its path on the last line. Idempotent.
set -euo pipefail
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  # No service is to be started by the package: the tests run their own.
  policy=/usr/sbin/policy-rc.d
  added_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    added_policy=1
  fi
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends nginx >/dev/null
  if [ "$added_policy" = 1 ]; then $SUDO rm -f "$policy"; fi
fi
if command -v nginx >/dev/null 2>&1; then command -v nginx; else echo /usr/sbin/nginx; fi
