#!/usr/bin/env python3
"""Puts scalescope's mean power per measured copy test and collective beside (1) the NVML energy
counter read by an independent process (scripts/energy_sampler.py), interpolated at the test's
window ends, and (2) `nvidia-smi --query-gpu=timestamp,power.draw.instant -lms 50` integrated
over the window (trapezoids), summed over the test's GPUs.

Usage: energy_tests_compare.py BANDWIDTH.json COLLECTIVES.json SAMPLERS SMIS
The JSON files are `scalescope bench bandwidth|collectives --json` output; SAMPLERS and SMIS are
comma-separated files, one per GPU (GPU 0, 1, … in order)."""

import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from energy_compare import integrate, interp, read_sampler, read_smi  # noqa: E402


def rows(path, label):
    run = json.load(open(path))
    for r in run.get("results", []):
        e = r.get("energy")
        if not e:
            continue
        if "test" in r:
            name = f"{r['test']} {r['src']}->{r['dst']} {r['bytes'] >> 20} MiB"
            rate = r.get("median_gbps")
        else:
            name = f"{r['op']} {r['algo']} {r['bytes']} B"
            rate = r.get("busbw_gbps")
        yield label, name, rate, e


def main():
    samplers = [read_sampler(p) for p in sys.argv[3].split(",")]
    smis = [read_smi(p) for p in sys.argv[4].split(",")]
    worst_counter = worst_smi = 0.0
    print(f"{'':<4} {'test':<34} {'GPUs':<5} {'GB/s':>8} {'s':>5} {'ours W':>7} {'counter W':>9} {'Δ':>7} "
          f"{'smi W':>7} {'Δ':>7} {'idle W':>6}")
    for label, name, rate, e in list(rows(sys.argv[1], "bw")) + list(rows(sys.argv[2], "coll")):
        t0, t1 = e["window_unix_s"]
        ours = e["mean_power_w"]
        counter = smi = 0.0
        for g in e["gpus"]:
            if g >= len(samplers):
                counter = smi = None
                break
            st, se = samplers[g]
            a, b = interp(st, se, t0), interp(st, se, t1)
            counter = None if a is None or b is None or counter is None else counter + (b - a) / (t1 - t0)
            smi_t, smi_w = smis[g]
            j = integrate(smi_t, smi_w, t0, t1) if smi_t else None
            smi = None if j is None or smi is None else smi + j / (t1 - t0)

        def dev(x):
            return None if x is None or x == 0 else (ours - x) / x * 100

        dc, ds = dev(counter), dev(smi)
        if dc is not None:
            worst_counter = max(worst_counter, abs(dc))
        if ds is not None:
            worst_smi = max(worst_smi, abs(ds))
        f = lambda x, w, p: "—".rjust(w) if x is None else f"{x:{w}.{p}f}"  # noqa: E731
        gpus = "+".join(str(g) for g in e["gpus"])
        print(f"{label:<4} {name:<34} {gpus:<5} {f(rate, 8, 1)} {t1 - t0:5.2f} {ours:7.1f} {f(counter, 9, 1)} "
              f"{f(dc, 6, 2)}% {f(smi, 7, 1)} {f(ds, 6, 2)}% {f(e.get('idle_power_w'), 6, 1)}")
    print(f"largest |Δ| vs the independent counter reader: {worst_counter:.2f} %; "
          f"vs nvidia-smi power.draw.instant: {worst_smi:.2f} %")


if __name__ == "__main__":
    main()
