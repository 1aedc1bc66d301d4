#!/usr/bin/env python3
"""Compares `scalescope watch --record` with watch_copy.py's own timing (docs/VERIFIED.md,
"Live traffic"): for every watch sample whose interval lies inside a copy phase, the bytes the
copy process moved in that same wall-clock window (each batch spread evenly over its own start
and end) against what watch read — PCIe RX for host->GPU, PCIe TX for GPU->host, the NVLink
pair traffic for GPU->GPU. Prints a table per phase and direction, and the overhead blocks.

PCIe is compared twice: as GPM counts it (packet bytes, headers included) and as the data
scalescope estimates in it (the `pcie_*_data_bytes_per_s` columns of `watch --csv`, written by
`watch --replay RECORDING --csv` when the live run wrote none).

Usage: watch_compare.py RECORDING.jsonl COPIES.jsonl WATCH.csv [OVERHEAD.jsonl]
"""
import csv
import json
import statistics
import sys


def load_recording(path):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    return lines[0], lines[1:]


def load_copies(path):
    batches, phases = [], {}
    for l in open(path):
        if not l.strip():
            continue
        d = json.loads(l)
        if d.get("event") == "start":
            phases[d["phase"]] = [d["t"], None]
        elif d.get("event") == "end":
            phases[d["phase"]][1] = d["t"]
        elif "bytes" in d:
            batches.append(d)
    return batches, phases


def moved(batches, kind, a, b):
    total = 0.0
    for x in batches:
        if x["kind"] != kind:
            continue
        lo, hi = max(a, x["start"]), min(b, x["end"])
        if hi > lo:
            total += x["bytes"] * (hi - lo) / (x["end"] - x["start"])
    return total / (b - a)


def pair(sample, src, dst):
    """Bytes/s from GPU src to GPU dst: src's transmit on its links to dst."""
    for g in sample["gpus"]:
        if g["gpu"] == src:
            vals = [l.get("tx_bytes_per_s") for l in g.get("nvlinks", []) if l["peer"] == {"gpu": dst}]
            vals = [v for v in vals if v is not None]
            return sum(vals) if vals else None
    return None


def gpu(sample, index):
    return next((g for g in sample["gpus"] if g["gpu"] == index), None)


DATA = {}


def load_data(path):
    for row in csv.DictReader(open(path)):
        if row["link"] == "" and row["pcie_rx_data_bytes_per_s"] != "":
            DATA[(round(float(row["t_s"]), 3), int(row["gpu"]))] = (
                float(row["pcie_rx_data_bytes_per_s"]),
                float(row["pcie_tx_data_bytes_per_s"] or "nan"),
            )


def data(s, index, which):
    d = DATA.get((round(s["t_s"], 3), index))
    return d[which] if d else None


READINGS = {
    ("h2d", "link"): lambda s: (gpu(s, 0) or {}).get("pcie_rx_bytes_per_s"),
    ("d2h", "link"): lambda s: (gpu(s, 0) or {}).get("pcie_tx_bytes_per_s"),
    ("h2d", "data"): lambda s: data(s, 0, 0),
    ("d2h", "data"): lambda s: data(s, 0, 1),
    ("p2p01", "nvlink"): lambda s: pair(s, 0, 1),
    ("p2p10", "nvlink"): lambda s: pair(s, 1, 0),
}


def main():
    header, samples = load_recording(sys.argv[1])
    batches, phases = load_copies(sys.argv[2])
    load_data(sys.argv[3])
    print(f"recording: {len(samples)} samples, interval {header['interval_s']} s, notes: {header.get('notes')}")
    print(f"{'phase':>8} {'direction':>9} {'reading':>7} {'samples':>7} {'watch GB/s':>11} {'copy GB/s':>10} {'diff %':>7} {'max |diff| %':>12}")
    worst = 0.0
    for name, (p0, p1) in phases.items():
        kinds = {x["kind"] for x in batches if x["phase"] == name}
        for kind, reading in [k for k in READINGS if k[0] in kinds]:
            w, c = [], []
            for s in samples:
                b = s.get("unix_s")
                if b is None:
                    continue
                a = b - s["interval_s"]
                # Whole interval inside the phase's copies (a margin for the first batch).
                if a < p0 + 0.3 or b > p1 - 0.1:
                    continue
                r = READINGS[(kind, reading)](s)
                if r is None:
                    continue
                w.append(r)
                c.append(moved(batches, kind, a, b))
            if not w:
                print(f"{name:>8} {kind:>9} {reading:>7}  no sample inside the phase")
                continue
            mw, mc = statistics.mean(w), statistics.mean(c)
            diff = (mw - mc) / mc * 100
            mx = max(abs(x - y) / y * 100 for x, y in zip(w, c))
            if reading != "link":
                worst = max(worst, abs(diff))
            print(f"{name:>8} {kind:>9} {reading:>7} {len(w):>7} {mw/1e9:>11.2f} {mc/1e9:>10.2f} {diff:>+7.2f} {mx:>12.2f}")
    # Idle: what watch read while nothing copied.
    for name, (p0, p1) in phases.items():
        if name != "idle":
            continue
        rx = [(gpu(s, 0) or {}).get("pcie_rx_bytes_per_s") for s in samples
              if s.get("unix_s") and p0 + 0.3 <= s["unix_s"] - s["interval_s"] and s["unix_s"] <= p1 - 0.1]
        rx = [x for x in rx if x is not None]
        if rx:
            print(f"idle: PCIe RX mean {statistics.mean(rx)/1e9:.3f} GB/s over {len(rx)} samples")
    print(f"worst phase difference (data and NVLink readings): {worst:.2f} %")
    if len(sys.argv) > 4:
        rows = [json.loads(l) for l in open(sys.argv[4]) if '"overhead"' in l]
        for interval in sorted({r["overhead"] for r in rows}):
            on = [r["h2d_bytes_per_s"] for r in rows if r["overhead"] == interval and r["watch"]]
            off = [r["h2d_bytes_per_s"] for r in rows if r["overhead"] == interval and not r["watch"]]
            if on and off:
                d = (statistics.median(on) - statistics.median(off)) / statistics.median(off) * 100
                print(f"overhead at --interval {interval}: h2d median {statistics.median(on)/1e9:.3f} GB/s with watch, "
                      f"{statistics.median(off)/1e9:.3f} without ({d:+.2f} %); blocks on {[round(x/1e9,2) for x in on]} off {[round(x/1e9,2) for x in off]}")


if __name__ == "__main__":
    main()
