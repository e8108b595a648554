#!/usr/bin/env bash
# Gateway CPU as instructions: the user-space instructions each gateway process spends per
# request, counted by callgrind — deterministic where the gateway section's CPU time per
# request moves with the machine's load (a 2-core machine running the load generator, the
# upstream and the gateway at once).
#
# For each way of forwarding (rpcwire, value, floor) and workload (W1, ETH), at 1 request in
# flight, runs the report's gateway section (`--quick --only gateway`, that cell only, measured
# for 3 s on W1 and 20 s on ETH, so that each gateway goes round the corpus's 236 requests
# several times and the partial last round weighs little) with
# that gateway's process under `valgrind --tool=callgrind`, and divides the instructions spent
# running its tasks (tokio's `run_task`, inclusive: process start and idle waiting left out;
# the first connection to the upstream is in, spread over the run's requests) by the requests
# it answered (calls of hyper's response head encoder). The load generator and the upstream
# run at full speed; the gateway under callgrind answers a few hundred requests a second. Kernel time is not counted: system calls per request are the same for the three
# (checked with strace -c).
#
# Usage: benches/gateway_instructions.sh      (needs valgrind, python3; honours CARGO_TARGET_DIR)
#        WORKLOADS="W1" KINDS="rpcwire floor" benches/gateway_instructions.sh
# Writes perf-reports/gateway_instructions.json.
set -euo pipefail
cd "$(dirname "$0")/.."

WORKLOADS=${WORKLOADS:-"W1 ETH"}
KINDS=${KINDS:-"rpcwire value floor"}

command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate is not installed" >&2; exit 1; }
# shellcheck source=benches/callgrind_common.sh
source "benches/callgrind_common.sh" "http,redis"

rows=""
for workload in $WORKLOADS; do
    for kind in $KINDS; do
        out="$profiles/$workload-$kind.out"
        duration=3000
        [ "$workload" = ETH ] && duration=20000
        GATEWAY_WORKLOADS=$workload GATEWAY_IN_FLIGHT=1 GATEWAY_DURATION_MS=$duration \
            TRANSPORT_SERVER_WRAPPER="valgrind --tool=callgrind --callgrind-out-file=$out --" \
            TRANSPORT_SERVER_WRAPPER_ONLY="gateway-$kind" \
            "$bin" --quick --only gateway >"$profiles/$workload-$kind.log" 2>&1
        callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$profiles/$workload-$kind.txt" 2>/dev/null
        # Requests answered: calls of hyper's server-side response head encoder.
        read -r requests running < <(python3 benches/callgrind_answers.py "$out" "$profiles/$workload-$kind.txt" \
            "<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::encode") || exit 1
        row=$(printf '{"workload": "%s", "implementation": "%s", "requests": %d, "instructions_per_request": %d}' \
            "$workload" "$kind" "$requests" $(( (running + requests / 2) / requests )))
        echo "$row"
        rows="$rows${rows:+,}$row"
    done
done

mkdir -p perf-reports
python3 - "$head" "[$rows]" >perf-reports/gateway_instructions.json <<'PY'
import datetime, json, subprocess, sys
head, rows = sys.argv[1], json.loads(sys.argv[2])
valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
print(json.dumps({
    "generated_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "git_head": head,
    "valgrind": valgrind,
    "method": "each gateway process under valgrind --tool=callgrind while the report's gateway "
              "section runs its cell (--quick, 1 in flight, 3 s on W1, 20 s on ETH); instructions "
              "inclusive of tokio's run_task (the process's tasks) / calls of hyper's server "
              "response head encoder",
    "results": rows,
}, indent=2))
PY
echo "wrote perf-reports/gateway_instructions.json"
