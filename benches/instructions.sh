#!/usr/bin/env bash
# Instruction counts per message: a deterministic guard against regressions (issue 3).
#
# Runs `report --instructions WORKLOAD PARSER N` under `valgrind --tool=callgrind`, collecting
# only inside `instructions_loop` (the parse loop), for N = 1 and N = 1001, and records
# (Ir(1001) - Ir(1)) / 1000 instructions per message in perf-reports/instructions.json: the
# difference removes the loop's one-off costs. rpcwire is counted on W1, W3 and W5; the
# fastest peers on the same workloads for reference.
#
# Usage: benches/instructions.sh            (needs valgrind; honours CARGO_TARGET_DIR)
#        WORKLOADS="W1" PARSERS="rpcwire" benches/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."

WORKLOADS=${WORKLOADS:-"W1 W3 W5"}
PARSERS=${PARSERS:-"rpcwire rpcwire-frame serde_json-borrowed simd-json-tape sonic-rs"}
N=1001

command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

bin=$(cargo bench --bench report --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*/report-[^"]*"' | tail -1 | sed 's/"executable":"//; s/"$//')
[ -x "$bin" ] || { echo "could not build the report bench" >&2; exit 1; }
# The source the binary was just built from (uncommitted changes under src/ are flagged).
head="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -z "$(git status --porcelain -- src 2>/dev/null)" ] || head="$head + uncommitted changes"

# Instructions collected inside instructions_loop for: workload parser n
collect() {
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*instructions_loop*' \
        "$bin" --instructions "$1" "$2" "$3" >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$out"
    rm -f "$out"
}

mkdir -p perf-reports
results=""
for w in $WORKLOADS; do
    for p in $PARSERS; do
        one=$(collect "$w" "$p" 1)
        many=$(collect "$w" "$p" "$N")
        per=$(awk -v a="$one" -v b="$many" -v n="$N" 'BEGIN { printf "%.1f", (b - a) / (n - 1) }')
        printf '%-4s %-20s %10s instructions/msg\n' "$w" "$p" "$per"
        results+="${results:+,
}    {\"workload\": \"$w\", \"parser\": \"$p\", \"instructions_per_msg\": $per}"
    done
done

machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
cat > perf-reports/instructions.json <<EOF
{
  "machine": "$machine",
  "generated_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "git_head": "$head",
  "method": "valgrind --tool=callgrind --toggle-collect='*instructions_loop*'; (Ir(N=$N) - Ir(N=1)) / $((N - 1))",
  "valgrind": "$(valgrind --version)",
  "results": [
$results
  ]
}
EOF
echo "wrote perf-reports/instructions.json"
