#!/usr/bin/env bash
# MCP server CPU as instructions: the user-space instructions rpcwire's MCP server process
# spends per `tools/call`, counted by callgrind — deterministic where the MCP section's CPU
# time per call moves with the machine's load by 20–40% between runs.
#
# For each server kind (rpcwire-stdio, rpcwire-http by default; any of the MCP section's
# `--mcp-server` kinds, rmcp-stdio say), at 1 call in flight (or IN_FLIGHT), runs the report's MCP section
# (`--quick --only mcp`, that server only, no memory measurement) with the server process
# under `valgrind --tool=callgrind`, and divides the instructions spent running its tasks
# (tokio's `run_task`, inclusive: process start and idle waiting left out) by the frames it
# answered (calls of libc's `write` over stdio, one per answer; of hyper's response head
# encoder over HTTP; the session's few handshake frames included). Compare two commits by running the
# script in each (a worktree): the counts do not move with the machine's load.
#
# Usage: benches/mcp_instructions.sh                       (needs valgrind, python3)
#        KINDS="rpcwire-stdio rmcp-stdio" benches/mcp_instructions.sh
#        IN_FLIGHT=64 KINDS="rpcwire-gateway-gateway" benches/mcp_instructions.sh   (default 1)
# Prints one JSON line per kind; writes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

KINDS=${KINDS:-"rpcwire-stdio rpcwire-http"}
IN_FLIGHT=${IN_FLIGHT:-1}

command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate is not installed" >&2; exit 1; }
# shellcheck source=benches/callgrind_common.sh
source "benches/callgrind_common.sh" "http,mcp"

for kind in $KINDS; do
    out="$profiles/$kind.out"
    MCP_SERVERS=$kind MCP_IN_FLIGHT=$IN_FLIGHT MCP_NO_MEMORY=1 \
        MCP_SERVER_WRAPPER="valgrind --tool=callgrind --callgrind-out-file=$out --" \
        "$bin" --quick --only mcp >"$profiles/$kind.log" 2>&1 || {
            echo "$kind: the report failed:" >&2; tail -20 "$profiles/$kind.log" >&2; exit 1; }
    # A server that forks (none here) would leave several profiles: the largest is the server.
    profile=$(ls -S "$out"* | head -1)
    callgrind_annotate --inclusive=yes --threshold=100 "$profile" >"$profiles/$kind.txt" 2>/dev/null
    # Frames answered: calls of hyper's response head encoder (HTTP), else of libc's write (stdio).
    hyper="<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::encode"
    counted=$(python3 benches/callgrind_answers.py "$profile" "$profiles/$kind.txt" "$hyper" 2>/dev/null ||
        python3 benches/callgrind_answers.py "$profile" "$profiles/$kind.txt" "=write") || {
            echo "$kind: no answers or no task time in the profile" >&2; exit 1; }
    read -r answered running <<<"$counted"
    printf '{"kind": "%s", "git_head": "%s", "answered": %d, "instructions_per_answer": %d}\n' \
        "$kind" "$head" "$answered" $(( (running + answered / 2) / answered ))
done
