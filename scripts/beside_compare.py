#!/usr/bin/env python3
"""Reads what scripts/beside-check.sh wrote: for each workload, scalescope's measured 1-GPU row
(GPU 0) beside the plain loop's blocks (GPU 1) that ran inside that row's timed window, and the
separate sampler's mean power of GPU 1 over those blocks beside scalescope's W/GPU."""

import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from scaling_compare import counter, watts  # noqa: E402


def main():
    out = sys.argv[1]
    ticks = counter(os.path.join(out, "sampler-1.csv"))
    plain = {}
    for line in open(os.path.join(out, "plain.jsonl")):
        if line.startswith("{"):
            r = json.loads(line)
            plain[r["tag"]] = r
    print("| workload | scalescope 1-GPU step ms (window) | plain blocks in that window: median ms (n) | "
          "error | scalescope W/GPU | sampler W over those blocks | error |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(out, "ours-*.json"))):
        w = os.path.basename(path)[5:-5]
        rows = json.load(open(path)).get("rows", [])
        row = next((r for r in rows if r["source"] == "measured_framework" and r["n_gpus"] == 1
                    and r["mode"] == "weak"), None)
        p = plain.get(w)
        if row is None or p is None:
            print(f"| {w} | no row or no plain run | | | | | |")
            continue
        t0, t1 = row["energy_window_unix_s"]
        inside = [(m, span) for m, span in zip(p["block_ms"], p["block_t"])
                  if span[0] >= t0 and span[1] <= t1]
        ms = statistics.median(m for m, _ in inside) if inside else None
        joules = sum(watts(ticks, s) * (s[1] - s[0]) for _, s in inside) if inside else None
        secs = sum(s[1] - s[0] for _, s in inside)
        w_plain = joules / secs if inside else None
        ours, w_ours = row["step_time_ms"], row.get("watts_per_gpu")

        def err(a, b):
            return "—" if a is None or b is None else f"{(a - b) / b * 100:+.1f} %"

        print(f"| {w} | {ours:.2f} ({t1 - t0:.0f} s) | "
              f"{'—' if ms is None else f'{ms:.2f}'} ({len(inside)}) | {err(ours, ms)} | "
              f"{'—' if w_ours is None else f'{w_ours:.1f}'} | "
              f"{'—' if w_plain is None else f'{w_plain:.1f}'} | {err(w_ours, w_plain)} |")


if __name__ == "__main__":
    sys.exit(main())
