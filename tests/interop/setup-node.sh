#!/usr/bin/env bash
# Installs the Node.js peers of the interop tests (tests/interop_vscode_jsonrpc.rs):
# vscode-jsonrpc, pinned by tests/interop/node/package-lock.json, with `npm ci` into
# <target dir>/interop-node (CARGO_TARGET_DIR if set, else target/ in the crate).
# Idempotent: a stamp holds the lock file's sha256, and nothing is done while it matches.
# The last line on stdout is the node_modules directory (for NODE_PATH).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crate="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$crate/target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
prefix="$target/interop-node"
stamp="$prefix/.lock.sha256"
want="$(sha256sum "$here/node/package-lock.json" | cut -d' ' -f1)"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: node and npm are needed for the vscode-jsonrpc interop tests" >&2
  exit 1
fi

mkdir -p "$prefix"
exec 9>"$target/interop-node.lock"
if command -v flock >/dev/null; then
  flock 9
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$prefix/node_modules/vscode-jsonrpc" ]; then
  echo "interop node modules up to date: $prefix/node_modules"
else
  cp "$here/node/package.json" "$here/node/package-lock.json" "$prefix/"
  (cd "$prefix" && npm ci --ignore-scripts --no-audit --no-fund >&2)
  echo "$want" > "$stamp"
fi
echo "$prefix/node_modules"
