#!/usr/bin/env python3
"""Puts scalescope's energy per measured framework row beside (1) the NVML energy counter read
by an independent process (scripts/energy_sampler.py) over the same Unix-time window and (2)
`nvidia-smi --query-gpu=timestamp,power.draw.instant -lms 50` integrated over it (trapezoids).

Usage: energy_compare.py SCALING.json SAMPLER.csv SMI.csv
SCALING.json is `scalescope bench scaling --measure --json` output or a `--bench` report.json (one GPU: the samplers
watch one GPU). Prints one line per row with a window, and the largest deviations."""

import csv
import datetime
import json
import sys


def interp(ts, vs, t):
    """Linear interpolation of vs at t (ts sorted)."""
    for i in range(1, len(ts)):
        if ts[i] >= t:
            a, b = ts[i - 1], ts[i]
            w = 0.0 if b == a else (t - a) / (b - a)
            return vs[i - 1] + w * (vs[i] - vs[i - 1])
    return None


def integrate(ts, ws, t0, t1):
    """Joules from power samples (W) over [t0, t1], trapezoids, the ends interpolated."""
    pts = [(t0, interp(ts, ws, t0))] + [(t, w) for t, w in zip(ts, ws) if t0 < t < t1] + \
          [(t1, interp(ts, ws, t1))]
    if any(w is None for _, w in pts):
        return None
    return sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(pts, pts[1:]))


def read_sampler(path):
    """The independent counter reader's (Unix seconds, joules)."""
    sampler = [r for r in csv.DictReader(open(path)) if r["energy_mj"]]
    return [float(r["t_unix"]) for r in sampler], [float(r["energy_mj"]) / 1e3 for r in sampler]


def read_smi(path):
    """nvidia-smi's (Unix seconds, watts)."""
    smi_t, smi_w = [], []
    for row in csv.reader(open(path)):
        if len(row) < 2 or not row[1].strip().replace(".", "").isdigit():
            continue
        stamp = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
        smi_t.append(stamp.timestamp())
        smi_w.append(float(row[1]))
    return smi_t, smi_w


def main():
    run = json.load(open(sys.argv[1]))
    if "scaling" in run:  # a report.json (--bench): its scaling run
        run = run["scaling"]["run"]
    st, se = read_sampler(sys.argv[2])
    smi_t, smi_w = read_smi(sys.argv[3])
    worst_counter = worst_smi = 0.0
    print(f"{'workload':<12} {'mode':<6} {'n':>2} {'samples/s':>10} {'W/GPU':>6} {'samples/J':>9} "
          f"{'ours J':>9} {'counter J':>9} {'Δ':>7} {'smi J':>9} {'Δ':>7}")
    for r in run["rows"]:
        win = r.get("energy_window_unix_s")
        if not win or r.get("watts_per_gpu") is None:
            continue
        t0, t1 = win
        ours = r["watts_per_gpu"] * r["n_gpus"] * (t1 - t0)
        a, b = interp(st, se, t0), interp(st, se, t1)
        counter = None if a is None or b is None else b - a
        smi = integrate(smi_t, smi_w, t0, t1) if smi_t else None
        dc = None if counter is None else (ours - counter) / counter * 100
        ds = None if smi is None else (ours - smi) / smi * 100
        if dc is not None:
            worst_counter = max(worst_counter, abs(dc))
        if ds is not None:
            worst_smi = max(worst_smi, abs(ds))
        fmt = lambda v, p: "—" if v is None else f"{v:.{p}f}"
        print(f"{r['workload']:<12} {r['mode']:<6} {r['n_gpus']:>2} {fmt(r.get('throughput'), 1):>10} "
              f"{r['watts_per_gpu']:>6.0f} {fmt(r.get('samples_per_joule'), 3):>9} {ours:>9.1f} "
              f"{fmt(counter, 1):>9} {fmt(dc, 2):>6}% {fmt(smi, 1):>9} {fmt(ds, 2):>6}%")
    print(f"largest |Δ| against the counter: {worst_counter:.2f} %; against nvidia-smi power.draw.instant: {worst_smi:.2f} %")


if __name__ == "__main__":
    main()
