#!/usr/bin/env bash
# Installs pinned Python test peers: a venv at <target dir>/NAME (CARGO_TARGET_DIR if set,
# else target/ in the crate) with the packages of REQUIREMENTS.
#
#   bash tests/support/install-python.sh REQUIREMENTS NAME IMPORTS LABEL
#
# IMPORTS is the comma-separated modules that must import once installed; LABEL names the
# peers in messages. Idempotent: a stamp file in the venv holds the requirements' sha256,
# and nothing is done while it matches and the modules import. One installer at a time per
# target directory (flock). The last line on stdout is the venv's python. Uses $PYTHON,
# default python3.
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: install-python.sh REQUIREMENTS NAME IMPORTS LABEL" >&2
  exit 2
fi
requirements="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
name="$2"
imports="$3"
label="$4"
crate="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$crate/target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;; # as cargo reads a relative CARGO_TARGET_DIR
esac
venv="$target/$name"
python="$venv/bin/python"
stamp="$venv/.requirements.sha256"
base_python="${PYTHON:-python3}"

want="$(sha256sum "$requirements" | cut -d' ' -f1)"

installed() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$python" -c "import $imports" 2>/dev/null
}

mkdir -p "$target"
exec 9>"$target/$name.lock"
if command -v flock >/dev/null; then
  flock 9
fi

if installed; then
  echo "$label up to date: $venv"
else
  if ! command -v "$base_python" >/dev/null; then
    echo "install-python.sh: $base_python not found: the $label need Python 3 with venv" >&2
    exit 1
  fi
  echo "$label: creating $venv with $("$base_python" --version 2>&1)"
  rm -rf "$venv"
  "$base_python" -m venv "$venv"
  "$python" -m pip install --disable-pip-version-check --no-input --quiet \
    --retries 2 --timeout 20 -r "$requirements"
  "$python" -c "import $imports"
  echo "$want" >"$stamp"
  echo "$label: installed $(grep -v '^#' "$requirements" | tr '\n' ' ')"
fi
echo "$python"
