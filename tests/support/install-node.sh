#!/usr/bin/env bash
# Installs pinned Node.js test peers: `npm ci` of DIR/package.json and DIR/package-lock.json
# into <target dir>/NAME (CARGO_TARGET_DIR if set, else target/ in the crate).
#
#   bash tests/support/install-node.sh DIR NAME CHECK LABEL
#
# CHECK is a path under node_modules that must exist once installed; LABEL names the peers
# in messages. Idempotent: a stamp holds the lock file's sha256, and nothing is done while it
# matches and CHECK exists. One installer at a time per target directory (flock). The last
# line on stdout is the node_modules directory (for NODE_PATH).
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: install-node.sh DIR NAME CHECK LABEL" >&2
  exit 2
fi
dir="$(cd "$1" && pwd)"
name="$2"
check="$3"
label="$4"
crate="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$crate/target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;; # as cargo reads a relative CARGO_TARGET_DIR
esac
prefix="$target/$name"
stamp="$prefix/.lock.sha256"
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: node and npm are needed to install the $label" >&2
  exit 1
fi

mkdir -p "$prefix"
exec 9>"$target/$name.lock"
if command -v flock >/dev/null; then
  flock 9
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -e "$prefix/node_modules/$check" ]; then
  echo "$label up to date: $prefix/node_modules"
else
  cp "$dir/package.json" "$dir/package-lock.json" "$prefix/"
  (cd "$prefix" && npm ci --ignore-scripts --no-audit --no-fund >&2)
  echo "$want" > "$stamp"
fi
echo "$prefix/node_modules"
