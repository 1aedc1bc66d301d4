#!/usr/bin/env python3
"""Sets scalescope's scaling rows beside the plain training loop's steps and the separate energy
sampler's power (scripts/scaling-check.sh wrote them into OUTDIR). Prints, per workload and
round: the plain 1-GPU and n-GPU steps, scalescope's measured 1-GPU step and its error against
the plain one, the model's n-GPU step and efficiency against the plain ones, and W/GPU of
scalescope's measured 1-GPU row against the sampler's mean power over the plain 1-GPU steps and
over scalescope's own steps (the stretches the row's energy is of, energy_stretches_unix_s: the
same steps, read by another process)."""

import csv
import glob
import json
import os
import re
import sys

# case → (the groups of scalescope runs that hold it, workload, mode)
NAMES = {"resnet50": (("cnn",), "resnet50", "weak"),
         "resnet50-strong": (("cnn",), "resnet50", "strong"),
         "bert-large": (("lm", "bert"), "bert-large", "weak"),
         "gpt2-xl": (("lm", "gpt"), "gpt2-xl", "weak")}


def counter(path):
    """(t, mJ) at each update of the counter: the first sample that shows a new value."""
    ticks, last = [], None
    with open(path) as f:
        for row in csv.DictReader(f):
            if not row["energy_mj"]:
                continue
            e = int(row["energy_mj"])
            if e != last:
                ticks.append((float(row["t_unix"]), e))
                last = e
    return ticks


def energy_at(ticks, t):
    for (t0, e0), (t1, e1) in zip(ticks, ticks[1:]):
        if t0 <= t <= t1:
            return e0 + (e1 - e0) * (t - t0) / (t1 - t0)
    return None


def watts(ticks, window):
    a, b = energy_at(ticks, window[0]), energy_at(ticks, window[1])
    if a is None or b is None:
        return None
    return (b - a) / 1e3 / (window[1] - window[0])


def stretch_watts(ticks, stretches):
    """Mean power over the stretches: their joules over their seconds, or None."""
    joules = seconds = 0.0
    for t0, t1 in stretches:
        a, b = energy_at(ticks, t0), energy_at(ticks, t1)
        if a is None or b is None:
            return None
        joules += (b - a) / 1e3
        seconds += t1 - t0
    return joules / seconds if seconds > 0 else None


def same_steps_watts(row, samplers):
    """The sampler's mean power over a measured row's own stretches, averaged over its ranks
    (rank r ran on GPU r: scaling-check.sh passes --gpus 0,1,…), or None."""
    st = row.get("energy_stretches_unix_s") if row else None
    if not st or not all(r in samplers for r in range(len(st))):
        return None
    per_rank = [stretch_watts(samplers[r], s) for r, s in enumerate(st)]
    return None if None in per_rank else sum(per_rank) / len(per_rank)


def pct(a, b):
    return None if a is None or b is None else (a - b) / b * 100


def fmt(v, d=1, suffix=""):
    return "—" if v is None else f"{v:.{d}f}{suffix}"


def main():
    out = sys.argv[1]
    samplers = {int(re.search(r"sampler-(\d+)", p).group(1)): counter(p)
                for p in glob.glob(os.path.join(out, "sampler-*.csv"))}
    plain = {}
    path = os.path.join(out, "plain.jsonl")
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                plain[(r["tag"], r["world"])] = r
    print("| case | round | n | plain 1 GPU ms | scalescope 1 GPU ms (err) | plain n GPU ms | "
          "model n GPU ms (err) | measured n GPU ms | plain eff | model eff (diff) | "
          "W/GPU sampler over plain | W/GPU scalescope (err) | "
          "W/GPU sampler over scalescope's steps (ours err) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (groups, wl, mode) in NAMES.items():
        paths = [p for g in groups for p in glob.glob(os.path.join(out, f"ours-{g}-r*.json"))]
        for path in sorted(paths):
            rnd = re.search(r"-r(\d+)\.json$", path).group(1)
            case(name, mode, path, rnd, wl, plain, samplers)
    beside(out, plain)
    same_steps(out, samplers)


def beside(out, plain):
    """BESIDE=1 runs: scalescope's 1-GPU step on GPU 0 against the plain loop's blocks on the
    last GPU over scalescope's timed window (the same seconds, the same host): the mean of the
    blocks, each weighted by its seconds inside the window (a block at the window's edge counts
    for its part)."""
    paths = sorted(glob.glob(os.path.join(out, "beside-*-r*.json")))
    if not paths:
        return
    print()
    print("| case | round | scalescope 1 GPU ms, GPU 0 | plain 1 GPU ms, last GPU, same seconds "
          "(blocks) | err |")
    print("|---|---|---|---|---|")
    for path in paths:
        tag, rnd = re.search(r"beside-(.+)-r(\d+)\.json$", path).groups()
        _, wl, mode = NAMES[tag]
        row = next((r for r in json.load(open(path)).get("rows", [])
                    if r.get("workload") == wl and r.get("mode") == mode
                    and r.get("source") == "measured_framework" and r["n_gpus"] == 1), None)
        p = plain.get((f"{tag}-beside-r{rnd}", 1))
        ours = row and row.get("step_time_ms")
        window = row and row.get("energy_window_unix_s")
        weighted = []
        if p and window:
            for ms, (t0, t1) in zip(p["block_ms"], p["block_t"]):
                s = min(t1, window[1]) - max(t0, window[0])
                if s > 0:
                    weighted.append((ms, s))
        seconds = sum(s for _, s in weighted)
        ref = sum(ms * s for ms, s in weighted) / seconds if seconds > 0 else None
        print(f"| {tag} | {rnd} | {fmt(ours, 2)} | {fmt(ref, 2)} ({len(weighted)}) "
              f"| {fmt(pct(ours, ref), 1, ' %')} |")


def same_steps(out, samplers):
    """Every measured row's W/GPU beside the sampler's counter over the row's own stretches."""
    print()
    print("| run | workload | mode | n | stretches | s | W/GPU scalescope | W/GPU sampler, same steps | err |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(out, "ours-*.json"))
                       + glob.glob(os.path.join(out, "beside-*.json"))):
        for r in json.load(open(path)).get("rows", []):
            st = r.get("energy_stretches_unix_s")
            if r.get("source") != "measured_framework" or not st:
                continue
            w = same_steps_watts(r, samplers)
            secs = min(sum(t1 - t0 for t0, t1 in s) for s in st)
            ours = r.get("watts_per_gpu")
            print(f"| {os.path.basename(path)} | {r['workload']} | {r['mode']} | {r['n_gpus']} "
                  f"| {max(len(s) for s in st)} | {secs:.1f} | {fmt(ours, 1)} | {fmt(w, 1)} "
                  f"| {fmt(pct(ours, w), 2, ' %')} |")


def plain_step(p):
    """The plain loop's step: its wall clock over every timed block ÷ their steps (the blocks
    hold equal step counts, so the mean of the block means), the time a run of them takes per
    step — scalescope's rows report the mean over their steps too. Falls back to the median of
    the block means the loop prints (step_ms) where the blocks are missing."""
    if not p:
        return None
    blocks = [b for b in p.get("block_ms") or [] if b and b > 0]
    return sum(blocks) / len(blocks) if blocks else p["step_ms"]


def case(name, mode, path, rnd, wl, plain, samplers):
    """One table row: the plain loop's steps beside one scalescope run."""
    rows = [r for r in json.load(open(path)).get("rows", [])
            if r.get("workload") == wl and r.get("mode") == mode]

    def row(source, n):
        return next((r for r in rows if r.get("source") == source and r["n_gpus"] == n),
                    None)

    tag = f"{name}-r{rnd}"
    p1 = plain.get((tag, 1))
    ns = sorted(k[1] for k in plain if k[0] == tag and k[1] > 1)
    if not ns:
        ns = sorted({r["n_gpus"] for r in rows if r["n_gpus"] > 1}) or [None]
    m1 = row("measured_framework", 1)
    s1 = plain_step(p1)
    ours1 = m1 and m1.get("step_time_ms")
    w_plain = None
    if p1 and 0 in samplers:
        w_plain = watts(samplers[0], p1["window_t"])
    w_ours = m1 and m1.get("watts_per_gpu")
    w_same = same_steps_watts(m1, samplers)
    for n in ns:
        pn = plain.get((tag, n)) if n else None
        mod = row("modeled", n) if n else None
        mn = row("measured_framework", n) if n else None
        sn = plain_step(pn)
        modn = mod and mod.get("step_time_ms")
        if s1 and sn:
            eff = s1 / sn if mode == "weak" else s1 / (n * sn)
        else:
            eff = None
        meff = mod and mod.get("efficiency")
        print(f"| {name} | {rnd} | {n or '—'} | {fmt(s1, 2)} | {fmt(ours1, 2)} "
              f"({fmt(pct(ours1, s1), 1, ' %')}) "
              f"| {fmt(sn, 2)} | {fmt(modn, 2)} ({fmt(pct(modn, sn), 1, ' %')}) "
              f"| {fmt(mn and mn.get('step_time_ms'), 2)} | {fmt(eff, 3)} "
              f"| {fmt(meff, 3)} ({fmt(None if meff is None or eff is None else meff - eff, 3)}) "
              f"| {fmt(w_plain, 1)} | {fmt(w_ours, 1)} ({fmt(pct(w_ours, w_plain), 1, ' %')}) "
              f"| {fmt(w_same, 1)} ({fmt(pct(w_ours, w_same), 1, ' %')}) |")

if __name__ == "__main__":
    sys.exit(main())
