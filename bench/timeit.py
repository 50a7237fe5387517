#!/usr/bin/env python3
"""Time commands side by side: wall time, CPU time and peak RSS of each run.

Reads cases from a TSV file, one per line:  LABEL <TAB> SIZE <TAB> COMMAND  (COMMAND is split
with shlex; its stdout goes to /dev/null, stderr is kept for failures). Every case runs --runs
times, round-robin (run 1 of every case, then run 2 of every case, ...), so a change in the
machine's load during the session hits all cases alike instead of one tool.

Per run it records wall time (time.perf_counter around the child), user+sys CPU seconds and
peak RSS from os.wait4, i.e. the rusage of that one child (ru_maxrss is the largest resident
set of the child or of any descendant it waited for; it is a maximum, not a sum over processes).

Writes every run to --json and prints a markdown table: min and median wall time, median CPU
time, max peak RSS, and for each size the ratio of every case's median to the --baseline case's.

Exit codes listed in --ok-codes (default 0,1: both syncguard and Checkov exit 1 when they have
findings) are success; any other exit code aborts the session with the command's stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv: list[str], ok_codes: set[int]) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Read stderr while the child runs (a full pipe would block it), then reap it with wait4.
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok_codes:
        sys.stderr.write(stderr.decode(errors="replace")[-4000:])
        raise SystemExit(f"timeit: {shlex.join(argv)} exited {proc.returncode}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "max_rss_kib": usage.ru_maxrss,  # KiB on Linux
        "exit": proc.returncode,
    }


def load_cases(path: str) -> list[dict]:
    cases = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            label, size, command = line.split("\t", 2)
            cases.append({"label": label, "size": int(size), "argv": shlex.split(command)})
    return cases


def fmt_s(s: float) -> str:
    return f"{s:.3f} s" if s < 10 else f"{s:.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", help="TSV file: LABEL<TAB>SIZE<TAB>COMMAND per line")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs of each case first (page cache, pyc)")
    ap.add_argument("--ok-codes", default="0,1")
    ap.add_argument("--baseline", help="label the ratios are relative to (default: the first case)")
    ap.add_argument("--json", help="write every run here")
    args = ap.parse_args()

    ok = {int(c) for c in args.ok_codes.split(",")}
    cases = load_cases(args.cases)
    if not cases:
        raise SystemExit("timeit: no cases")
    for c in cases:
        c["runs"] = []
        for _ in range(args.warmup):
            run_once(c["argv"], ok)
    for r in range(args.runs):
        for c in cases:
            res = run_once(c["argv"], ok)
            c["runs"].append(res)
            print(f"  run {r + 1}/{args.runs} {c['label']:<28} {c['size']:>6}: "
                  f"{fmt_s(res['wall_s'])} wall, {res['cpu_s']:.2f} s cpu, {res['max_rss_kib'] / 1024:.0f} MiB",
                  file=sys.stderr, flush=True)

    baseline = args.baseline or cases[0]["label"]
    rows = []
    for c in cases:
        walls = [x["wall_s"] for x in c["runs"]]
        c["summary"] = {
            "min_wall_s": min(walls),
            "median_wall_s": statistics.median(walls),
            "median_cpu_s": statistics.median(x["cpu_s"] for x in c["runs"]),
            "max_rss_mib": max(x["max_rss_kib"] for x in c["runs"]) / 1024,
        }
        rows.append(c)
    base = {c["size"]: c["summary"]["median_wall_s"] for c in rows if c["label"] == baseline}

    print("| tool | objects | min wall | median wall | median CPU (user+sys) | objects/s (median) | peak RSS | median wall / " + baseline + " |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in sorted(rows, key=lambda c: (c["size"], c["label"] != baseline)):
        s = c["summary"]
        ratio = s["median_wall_s"] / base[c["size"]] if c["size"] in base else float("nan")
        print(f"| {c['label']} | {c['size']:,} | {fmt_s(s['min_wall_s'])} | {fmt_s(s['median_wall_s'])} | "
              f"{s['median_cpu_s']:.2f} s | {c['size'] / s['median_wall_s']:,.0f} | {s['max_rss_mib']:.0f} MiB | {ratio:.2f}× |")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([{k: v for k, v in c.items()} for c in rows], f, indent=1)


if __name__ == "__main__":
    main()
