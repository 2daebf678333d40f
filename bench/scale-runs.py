#!/usr/bin/env python3
"""Writes scaled copies of recorded runs: memory or CPU times a factor, or every Nth sample.

To ask how the policy fares on jobs unlike the ones recorded: larger jobs, a machine with more
cores, a coarser recorder. The copies are measured as any runs are:
RUNS=<to> RUNS_ONLY=1 bash bench/savings.sh (docs/savings.md, "Runs scaled").

Usage: python3 bench/scale-runs.py FROM_DIR TO_DIR [--memory F] [--cpu F] [--every N]
"""
import argparse
import csv
import pathlib
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", type=pathlib.Path, help="a directory of trace CSVs")
    p.add_argument("target", type=pathlib.Path, help="where the scaled copies go (created)")
    p.add_argument("--memory", type=float, default=1.0, help="factor on mem.working.set")
    p.add_argument("--cpu", type=float, default=1.0, help="factor on cpu.usage.cores")
    p.add_argument("--every", type=int, default=1, help="keep every Nth sample")
    a = p.parse_args()
    if a.memory <= 0 or a.cpu <= 0 or a.every < 1:
        sys.exit("scale-runs.py: factors must be positive and --every at least 1")
    runs = sorted(a.source.glob("*.csv"))
    if not runs:
        sys.exit(f"scale-runs.py: no *.csv in {a.source}")
    a.target.mkdir(parents=True, exist_ok=True)
    for run in runs:
        with open(run, newline="") as f:
            rows = list(csv.DictReader(f))
        if not rows or not {"mem.working.set", "cpu.usage.cores"} <= rows[0].keys():
            sys.exit(f"scale-runs.py: {run}: no samples with mem.working.set and cpu.usage.cores")
        with open(a.target / run.name, "w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            out.writeheader()
            for row in rows[:: a.every]:
                row["mem.working.set"] = str(round(float(row["mem.working.set"]) * a.memory))
                row["cpu.usage.cores"] = f"{float(row['cpu.usage.cores']) * a.cpu:.4f}"
                out.writerow(row)


if __name__ == "__main__":
    main()
