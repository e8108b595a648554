#!/usr/bin/env bash
# Installs Debian packages (the arguments) with apt-get, starting none of their services:
# the tests run their own servers, with their own configuration, on loopback ports.
# Used by the setup scripts of the tests that need a server (tests/redis, tests/nginx).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
added_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod +x "$policy"
  added_policy=1
fi
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
if [ "$added_policy" = 1 ]; then $SUDO rm -f "$policy"; fi
