# What the callgrind scripts (instructions.sh, gateway_instructions.sh, mcp_instructions.sh)
# share, sourced by them: valgrind checked, the report bench built with the features given,
# and, set for the caller, `bin` (the bench binary), `head` (the commit it was built from,
# flagged when crates or src have uncommitted changes) and `profiles` (a directory removed
# on exit, or KEEP_PROFILES).
#
# Usage: source benches/callgrind_common.sh "http,mcp"   (features; "" for none)

command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bin=$(cargo bench --bench report ${1:+--features "$1"} --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*/report-[^"]*"' | tail -1 | sed 's/"executable":"//; s/"$//')
[ -x "$bin" ] || { echo "could not build the report bench" >&2; exit 1; }
head="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -z "$(git status --porcelain -- src crates 2>/dev/null)" ] || head="$head + uncommitted changes"

# KEEP_PROFILES=DIR keeps the profiles and their annotations in DIR (else removed on exit).
if [ -n "${KEEP_PROFILES:-}" ]; then
    profiles=$KEEP_PROFILES
    mkdir -p "$profiles"
else
    profiles=$(mktemp -d)
    trap 'rm -rf "$profiles"' EXIT
fi
