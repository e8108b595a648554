#!/usr/bin/env bash
# Installs the official MCP Python SDK for the MCP tests (tests/mcp_sdk_clients.rs): a venv at
# <target dir>/mcp-venv (CARGO_TARGET_DIR if set, else target/ in the crate) with the
# pinned packages of tests/mcp/requirements.txt. Idempotent: a stamp file in the venv
# holds the requirements' sha256, and nothing is done while it matches and the packages
# import. The last line on stdout is the venv's python. Uses $PYTHON, default python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crate="$(cd "$here/../.." && pwd)"
requirements="$here/requirements.txt"

target="${CARGO_TARGET_DIR:-$crate/target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;; # as cargo reads a relative CARGO_TARGET_DIR
esac
venv="$target/mcp-venv"
python="$venv/bin/python"
stamp="$venv/.requirements.sha256"
base_python="${PYTHON:-python3}"

want="$(sha256sum "$requirements" | cut -d' ' -f1)"

installed() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
    "$python" -c 'import mcp, mcp.client.stdio, mcp.client.streamable_http, httpx2' 2>/dev/null
}

mkdir -p "$target"
# One installer at a time (two test runs sharing a target directory).
exec 9>"$target/mcp-venv.lock"
if command -v flock >/dev/null; then
  flock 9
fi

if installed; then
  echo "MCP venv up to date: $venv"
else
  if ! command -v "$base_python" >/dev/null; then
    echo "setup-python.sh: $base_python not found: the MCP tests need Python 3 with venv" >&2
    exit 1
  fi
  echo "MCP venv: creating $venv with $("$base_python" --version 2>&1)"
  rm -rf "$venv"
  "$base_python" -m venv "$venv"
  "$python" -m pip install --disable-pip-version-check --no-input --quiet \
    --retries 2 --timeout 20 -r "$requirements"
  "$python" -c 'import mcp, mcp.client.stdio, mcp.client.streamable_http, httpx2'
  echo "$want" >"$stamp"
  echo "MCP venv: installed $(grep -v '^#' "$requirements" | tr '\n' ' ')"
fi
echo "$python"
