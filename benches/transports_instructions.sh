#!/usr/bin/env bash
# Transport server CPU as instructions: the user-space instructions each server of the
# report's transports section spends per request, counted by callgrind — deterministic where
# the section's CPU time per request moves with the machine's load (this 2-core machine
# swings by 20–40% between runs, the floors' too).
#
# For each server (rpcwire, jsonrpsee and the floors: bare hyper for HTTP, fastwebsockets for
# WebSocket) and transport, at 64 connections (CONNECTIONS), runs the report's transports
# section (`--quick --only transports`, that server and transport only) with the server's
# process under `valgrind --tool=callgrind`, and divides the instructions spent running its
# tasks (tokio's `run_task`, inclusive: process start and idle waiting left out) by the
# requests it answered: calls of hyper's response head encoder over HTTP, of fastwebsockets'
# frame head writer over WebSocket (jsonrpsee writes its frames with soketto: its WebSocket
# row counts soketto's frame writes, the few closes at the end included). Kernel time is not counted: every
# server makes one read and one write system call per request here (checked with strace -c).
#
# Usage: benches/transports_instructions.sh      (needs valgrind, python3; honours CARGO_TARGET_DIR)
#        SERVERS="rpcwire floor-hyper" PROTOCOLS=http CONNECTIONS=1 benches/transports_instructions.sh
# Prints one JSON line per server and transport; writes perf-reports/transports_instructions.json.
set -euo pipefail
cd "$(dirname "$0")/.."

SERVERS=${SERVERS:-"rpcwire jsonrpsee floor-hyper floor-fastwebsockets"}
PROTOCOLS=${PROTOCOLS:-"http ws"}
CONNECTIONS=${CONNECTIONS:-64}

command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate is not installed" >&2; exit 1; }
# shellcheck source=benches/callgrind_common.sh
source "benches/callgrind_common.sh" "http"

rows=""
for protocol in $PROTOCOLS; do
    for server in $SERVERS; do
        # The floors serve one transport each.
        [ "$server" = floor-hyper ] && [ "$protocol" != http ] && continue
        [ "$server" = floor-fastwebsockets ] && [ "$protocol" != ws ] && continue
        out="$profiles/$protocol-$server.out"
        TRANSPORT_SERVERS=$server TRANSPORT_PROTOCOLS=$protocol TRANSPORT_CONNECTIONS=$CONNECTIONS \
            TRANSPORT_SERVER_WRAPPER="valgrind --tool=callgrind --callgrind-out-file=$out --" \
            "$bin" --quick --only transports >"$profiles/$protocol-$server.log" 2>&1 || {
                echo "$protocol $server: the report failed:" >&2; tail -20 "$profiles/$protocol-$server.log" >&2; exit 1; }
        callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$profiles/$protocol-$server.txt" 2>/dev/null
        # What marks one answer: the HTTP response head, or the WebSocket frame head.
        if [ "$protocol" = http ]; then
            markers=("<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::encode")
        else
            markers=("fastwebsockets::frame::Frame::fmt_head" "soketto::connection::Sender<T>::write::{{closure}}")
        fi
        read -r requests instructions < <(python3 benches/callgrind_answers.py "$out" \
            "$profiles/$protocol-$server.txt" "${markers[@]}") || exit 1
        row=$(printf '{"transport": "%s", "server": "%s", "connections": %d, "requests": %d, "instructions_per_request": %d, "git": "%s"}' \
            "$protocol" "$server" "$CONNECTIONS" "$requests" $(( (instructions + requests / 2) / requests )) "$head")
        echo "$row"
        rows="$rows${rows:+,}$row"
    done
done

mkdir -p perf-reports
echo "[$rows]" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=2))' \
    >perf-reports/transports_instructions.json
echo "wrote perf-reports/transports_instructions.json"
