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
        "| target | CPU seconds | runs | legs | cov (last) | corpus (last) "
        "| findings | fixed | open | last run | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for target in targets_in_manifest():
        mine = [row for row in rows if row["target"] == target]
        cpu = sum(float(row["cpu_seconds"]) for row in mine)
        runs = sum(int(row["runs"]) for row in mine)
        findings = [row["finding"] for row in mine if row["finding"] != "-"]
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
            f"| {len(findings)} | {fixed} | {open_findings} "
            f"| {last['date'][:10] if last else 'never'} | {goal} |"
        )
    lines.append("")
    with open(os.path.join(HERE, "STATUS.md"), "w", encoding="utf-8") as status:
        status.write("\n".join(lines))


if __name__ == "__main__":
    main()
