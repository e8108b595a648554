#!/usr/bin/env python3
"""Rewrites fuzz/STATUS.md from fuzz/campaign.tsv (written by fuzz/campaign.sh).

Per target: CPU seconds in total, runs in total, the last run's coverage and corpus size,
findings (crash artifacts recorded by a run), findings fixed (regression seeds named
fuzz/seeds/TARGET/finding-*), and the date of the last run. Nothing here is typed by hand:
every figure comes from libFuzzer's output or time(1), through campaign.tsv.
"""

import csv
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
GOAL_CPU_SECONDS = 3600


def targets_in_manifest():
    with open(os.path.join(HERE, "Cargo.toml"), encoding="utf-8") as manifest:
        names = re.findall(r'^name = "(.*)"$', manifest.read(), re.MULTILINE)
    return [name for name in names if name != "rpcwire-fuzz"]


def main():
    dismissed = {}
    dismissed_path = os.path.join(HERE, "dismissed.tsv")
    if os.path.exists(dismissed_path):
        with open(dismissed_path, encoding="utf-8", newline="") as table:
            for row in csv.DictReader(table, delimiter="\t"):
                dismissed[row["artifact"]] = row["reason"]
    rows = []
    path = os.path.join(HERE, "campaign.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8", newline="") as table:
            rows = list(csv.DictReader(table, delimiter="\t"))
    lines = [
        "# Fuzzing status",
        "",
        "Written by `fuzz/status.py` from `fuzz/campaign.tsv`, which `fuzz/campaign.sh` appends "
        "to after each run (CPU seconds from time(1) on the fuzzer process; runs, coverage and "
        "corpus from libFuzzer's output). Do not edit by hand.",
        "",
        f"Goal: at least {GOAL_CPU_SECONDS} CPU seconds per target, no open finding.",
        "",
        "Slow units are inputs libFuzzer saved because one run of them took over 10 s of "
        "wall-clock time; a fuzzer paused (SIGSTOP) while a benchmark runs reports them too. "
        "Interrupted legs were ended early with SIGINT (libFuzzer exits with 72). Neither is a "
        "failure (a real hang is a timeout finding, `-timeout=10`); both are counted apart.",
        "",
        "| target | CPU seconds | runs | legs | cov (last) | corpus (last) "
        "| findings | fixed | open | dismissed | slow units, interrupted | last run | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for target in targets_in_manifest():
        mine = [row for row in rows if row["target"] == target]
        cpu = sum(float(row["cpu_seconds"]) for row in mine)
        runs = sum(int(row["runs"]) for row in mine)
        # Slow-unit reports (recorded as findings before campaign.sh told them apart) are
        # libFuzzer's note that one input took over 10 s of wall-clock time: no failure, and
        # what a fuzzer paused during a benchmark reports. Counted apart.
        # Legs ended early with SIGINT (libFuzzer's exit code 72, "run interrupted"), recorded
        # as findings before campaign.sh told them apart, are no failure either.
        slow = [
            row["finding"]
            for row in mine
            if "/slow-unit-" in row["finding"] or row["finding"].startswith("exit-72(")
        ]
        findings = [
            row["finding"] for row in mine if row["finding"] != "-" and row["finding"] not in slow
        ]
        # Findings looked into and found to be no failure, each with its reason and evidence
        # in dismissed.tsv (shown below the table).
        not_failures = [f for f in findings if f in dismissed]
        findings = [f for f in findings if f not in dismissed]
        seeds = os.path.join(HERE, "seeds", target)
        fixed = 0
        if os.path.isdir(seeds):
            fixed = sum(1 for name in os.listdir(seeds) if name.startswith("finding-"))
        open_findings = max(len(findings) - fixed, 0)
        last = mine[-1] if mine else None
        goal = "met" if cpu >= GOAL_CPU_SECONDS and open_findings == 0 else "not yet"
        lines.append(
            f"| `{target}` | {cpu:,.0f} | {runs:,} | {len(mine)} "
            f"| {last['cov'] if last else '-'} | {last['corpus'] if last else '-'} "
            f"| {len(findings)} | {fixed} | {open_findings} | {len(not_failures)} | {len(slow)} "
            f"| {last['date'][:10] if last else 'never'} | {goal} |"
        )
    if dismissed:
        lines += ["", "Dismissed (from `fuzz/dismissed.tsv`: looked into, no failure):", ""]
        lines += [f"- `{artifact}`: {reason}" for artifact, reason in dismissed.items()]
    lines.append("")
    with open(os.path.join(HERE, "STATUS.md"), "w", encoding="utf-8") as status:
        status.write("\n".join(lines))


if __name__ == "__main__":
    main()
