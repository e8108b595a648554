#!/usr/bin/env bash
# One leg of the fuzzing campaign: run a target for a while, record what libFuzzer says.
#
#   bash fuzz/campaign.sh TARGET SECONDS      # one target
#   bash fuzz/campaign.sh --all SECONDS       # every target in turn, SECONDS each
#
# The fuzzer runs on one core (libFuzzer is single-threaded), under AddressSanitizer when the
# nightly toolchain is there (`cargo +nightly fuzz`), without a sanitizer otherwise. Its
# working corpus is fuzz/corpus/TARGET (git-ignored), grown from fuzz/seeds/TARGET. Each run
# appends one line to fuzz/campaign.tsv (committed): the date, the target, the CPU seconds
# the fuzzer process used (user + system, from time(1)), and from libFuzzer's own output the
# runs, the coverage (cov), the features (ft), the corpus size, and the crash artifact if
# it found one. fuzz/STATUS.md is then rewritten from campaign.tsv by fuzz/status.py.
#
# To end a leg early (before a benchmark, say), send SIGINT to the fuzzer process: the leg is
# recorded with what it did. Do not pause it with SIGSTOP: libFuzzer measures wall-clock time,
# so the input in flight comes back as a slow unit or a timeout.
#
# A finding stops the run: libFuzzer leaves the input in fuzz/artifacts/TARGET/. Fix it, copy
# the input to fuzz/seeds/TARGET/finding-<name> (status.py counts it as fixed) and add a
# unit test.
set -euo pipefail
cd "$(dirname "$0")"

if [ $# -ne 2 ]; then
  echo "usage: bash fuzz/campaign.sh TARGET|--all SECONDS" >&2
  exit 2
fi
seconds=$2

if cargo +nightly --version >/dev/null 2>&1; then
  toolchain=(+nightly)
  sanitizer=address
else
  toolchain=()
  sanitizer=none
fi

# cargo-fuzz is a cargo subcommand from crates.io; a fresh machine does not have it.
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --quiet
fi

all_targets() {
  sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^rpcwire-fuzz$'
}

run_one() {
  local target=$1
  mkdir -p "corpus/$target" "artifacts/$target" logs
  python3 corpus_seeds.py "$target"
  cargo "${toolchain[@]}" fuzz build -s "$sanitizer" -O "$target" >/dev/null
  local binary
  binary=$(ls -t target/*/release/"$target" | head -n 1)
  local seeds=()
  [ -d "seeds/$target" ] && seeds=("seeds/$target")
  local stamp log timing
  stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  log="logs/$target-${stamp//:/}.log"
  timing=$(mktemp)
  set +e
  /usr/bin/time -f '%U %S' -o "$timing" \
    "$binary" "corpus/$target" "${seeds[@]}" \
    -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="artifacts/$target/" >"$log" 2>&1
  local status=$?
  set -e
  # time(1) writes "Command exited with non-zero status N" first when the fuzzer fails.
  local cpu
  cpu=$(tail -n 1 "$timing" | awk '{ printf "%.1f", $1 + $2 }')
  rm -f "$timing"
  local runs cov ft corpus artifact
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 }')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 }')
  corpus=$(find "corpus/$target" -type f | wc -l)
  # A slow unit (one input over 10 s of wall-clock time) is saved too, but it is no failure:
  # findings are the crashes, leaks, timeouts and out-of-memory inputs.
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | grep -v '/slow-unit-' | tail -n 1 || true)
  # SIGINT ends a leg early: libFuzzer says "run interrupted" and exits with 72.
  if [ "$status" -eq 72 ] && grep -q 'libFuzzer: run interrupted' "$log"; then
    status=0
  fi
  if [ "$status" -ne 0 ] && [ -z "$artifact" ]; then
    artifact="exit-$status(see $log)"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$stamp" "$target" "$sanitizer" "$cpu" \
    "${runs:-0}" "${cov:-0}" "${ft:-0}" "$corpus" "${artifact:--}" >>campaign.tsv
  echo "$target: ${cpu}s CPU, ${runs:-0} runs, cov ${cov:-0}, corpus $corpus${artifact:+, FINDING $artifact}"
  python3 status.py
  [ -z "$artifact" ]
}

if [ ! -f campaign.tsv ]; then
  printf 'date\ttarget\tsanitizer\tcpu_seconds\truns\tcov\tft\tcorpus\tfinding\n' >campaign.tsv
fi

if [ "$1" = "--all" ]; then
  for target in $(all_targets); do
    run_one "$target" || true
  done
else
  run_one "$1"
fi
