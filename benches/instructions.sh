#!/usr/bin/env bash
# Instruction counts per message: a deterministic guard against regressions (issue 3).
#
# Runs `report --instructions WORKLOAD PARSER N` under `valgrind --tool=callgrind`, collecting
# only inside `instructions_loop` (the parse loop, cycling through the workload's messages),
# for N = 1 and N = 1 + k x messages (at least 1001; 1001 for one-message workloads), and
# records (Ir(N) - Ir(1)) / (N - 1) instructions per message in perf-reports/instructions.json:
# the difference removes the loop's one-off costs, and for a stream (ETH) it is the mean per
# message. rpcwire is counted on W1, W2, W3, W4, W5, W7 and ETH; the fastest peers on the same
# workloads for reference. For rpcwire it also records where the instructions go (by function
# and by source file; callgrind_annotate and python3), which the report shows under "Where the
# time goes".
#
# Usage: benches/instructions.sh            (needs valgrind; honours CARGO_TARGET_DIR)
#        WORKLOADS="W1" PARSERS="rpcwire" benches/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."

WORKLOADS=${WORKLOADS:-"W1 W2 W3 W4 W5 W7 ETH"}
PARSERS=${PARSERS:-"rpcwire rpcwire-frame serde_json-borrowed simd-json-tape sonic-rs"}

# shellcheck source=benches/callgrind_common.sh
source "benches/callgrind_common.sh" ""

# Instructions collected inside instructions_loop for: workload parser n (the callgrind
# output stays in $profiles/workload-parser-n.out for the profile below).
collect() {
    local out="$profiles/$1-$2-$3.out"
    valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*instructions_loop*' \
        "$bin" --instructions "$1" "$2" "$3" >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$out"
}

# Where rpcwire's instructions go on one workload, as JSON: per message, by function (code
# inlined into a function counts as that function's) and by source file (which part of the
# parser, bounds checks in core's slice code, the vector intrinsics), from the same two runs
# as the total: (Ir(N) - Ir(1)) / (N - 1) for each entry.
profile() {
    command -v callgrind_annotate >/dev/null || { echo null; return; }
    callgrind_annotate --auto=no --threshold=100 "$profiles/$1-rpcwire-1.out" >"$profiles/one.txt" 2>/dev/null
    callgrind_annotate --auto=no --threshold=100 "$profiles/$1-rpcwire-$2.out" >"$profiles/many.txt" 2>/dev/null
    python3 - "$profiles/one.txt" "$profiles/many.txt" "$2" <<'PY'
import collections, json, re, sys

def read(path):
    """(source file, function) -> instructions, from callgrind_annotate's table."""
    counts = collections.Counter()
    for line in open(path):
        m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+([^:\s][^:]*):(.*?)( \[/[^\]]*\])?$", line)
        if m and m.group(2) != "PROGRAM TOTALS":
            counts[(m.group(2), m.group(3))] += int(m.group(1).replace(",", ""))
    return counts

def short_file(path):
    if "/stdarch/crates/core_arch/src/" in path:
        return "std: core_arch/" + path.split("/stdarch/crates/core_arch/src/")[1]
    if "/library/" in path:
        return "std: " + path.split("/library/", 1)[1]
    if "/.cargo/registry/src/" in path:
        return "crate: " + path.split("/.cargo/registry/src/", 1)[1].split("/", 1)[1]
    return re.sub(r"^.*?/(src|benches)/", r"\1/", path)

one, many, n = read(sys.argv[1]), read(sys.argv[2]), int(sys.argv[3])
by_function, by_file = collections.Counter(), collections.Counter()
for key in set(one) | set(many):
    per = (many[key] - one[key]) / (n - 1)
    by_function[key[1]] += per
    by_file[short_file(key[0])] += per

def top(counter, field):
    rows = [(k, v) for k, v in counter.most_common() if v >= 0.5]
    head, rest = rows[:10], sum(v for _, v in rows[10:])
    out = [{field: k, "instructions_per_msg": round(v, 1)} for k, v in head]
    if rest:
        out.append({field: "(everything else)", "instructions_per_msg": round(rest, 1)})
    return out

print(json.dumps({"by_function": top(by_function, "function"), "by_file": top(by_file, "file")}))
PY
}

# Conditional branches and how many of them cachegrind's branch predictor model mispredicts,
# for the whole run of: workload parser n (cachegrind cannot collect inside one function; the
# difference of two runs leaves the parse loop). The model is a simple one, not this CPU's
# predictor: a relative measure of how predictable each parser's branches are.
branches() {
    local out="$profiles/branches-$1-$2-$3.out"
    valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file="$out" \
        "$bin" --instructions "$1" "$2" "$3" >/dev/null 2>&1
    # events: Ir Bc Bcm Bi Bim
    awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
         /^summary:/ { print $(col["Bc"] + 1), $(col["Bcm"] + 1) }' "$out"
}

mkdir -p perf-reports
results=""
breakdown=""
for w in $WORKLOADS; do
    # N = 1 + k × the workload's messages, at least 1001: the counted loop cycles through the
    # messages, so Ir(N) - Ir(1) is k parses of each (a stream's mean per message).
    messages=$("$bin" --instructions "$w" rpcwire 1 | sed -n 's/.*; messages \([0-9]*\)$/\1/p')
    [ -n "$messages" ] || { echo "could not count the messages of $w" >&2; exit 1; }
    N=$((1 + messages * ((1000 + messages - 1) / messages)))
    for p in $PARSERS; do
        one=$(collect "$w" "$p" 1)
        many=$(collect "$w" "$p" "$N")
        per=$(awk -v a="$one" -v b="$many" -v n="$N" 'BEGIN { printf "%.1f", (b - a) / (n - 1) }')
        read -r bc_one bcm_one <<<"$(branches "$w" "$p" 1)"
        read -r bc_many bcm_many <<<"$(branches "$w" "$p" "$N")"
        bc=$(awk -v a="$bc_one" -v b="$bc_many" -v n="$N" 'BEGIN { printf "%.1f", (b - a) / (n - 1) }')
        # (a prediction that the shorter run got wrong once can make the difference negative)
        bcm=$(awk -v a="$bcm_one" -v b="$bcm_many" -v n="$N" \
            'BEGIN { v = (b - a) / (n - 1); printf "%.1f", v < 0 ? 0 : v }')
        printf '%-4s %-20s %10s instructions/msg %9s branches/msg %8s mispredicted (model)\n' \
            "$w" "$p" "$per" "$bc" "$bcm"
        results+="${results:+,
}    {\"workload\": \"$w\", \"parser\": \"$p\", \"instructions_per_msg\": $per, \"branches_per_msg\": $bc, \"mispredicted_per_msg\": $bcm}"
        if [ "$p" = rpcwire ]; then
            breakdown+="${breakdown:+,
}    {\"workload\": \"$w\", \"profile\": $(profile "$w" "$N")}"
        fi
    done
done

machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
cat > perf-reports/instructions.json <<EOF
{
  "machine": "$machine",
  "generated_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "git_head": "$head",
  "method": "valgrind --tool=callgrind --toggle-collect='*instructions_loop*', the loop cycling through the workload's messages; (Ir(N) - Ir(1)) / (N - 1) with N = 1 + k x messages, at least 1001 (1001 for one-message workloads), so a stream's figure is its mean per message; branches: valgrind --tool=cachegrind --branch-sim=yes, (Bc(N) - Bc(1)) / (N - 1), mispredicted likewise from Bcm (cachegrind's predictor model)",
  "valgrind": "$(valgrind --version)",
  "results": [
$results
  ],
  "profiles": [
$breakdown
  ]
}
EOF
echo "wrote perf-reports/instructions.json"
