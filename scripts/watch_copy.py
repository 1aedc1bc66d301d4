#!/usr/bin/env python3
"""Copies at rates it times itself, for checking `scalescope watch` (docs/VERIFIED.md, "Live
traffic"): host->GPU, GPU->host, both at once, GPU->GPU (peer), in phases. Writes JSON lines to
standard output: one per batch of copies, {"phase", "kind", "start", "end", "bytes"} with
wall-clock (Unix) times around synchronized copies, and one per phase boundary.

Usage: watch_copy.py PHASES            e.g. idle:4,h2d:12,d2h:12,both:12,idle:3
       watch_copy.py --overhead BIN    h2d blocks with and without `BIN watch` running
Phase kinds: idle, h2d, d2h, both (h2d and d2h at once), p2p01, p2p10, p2pboth.
"""
import json
import subprocess
import sys
import time

import torch

CHUNK = 256 << 20  # bytes per copy
BATCH_S = 0.1  # a line per ~100 ms of copies


def say(obj):
    print(json.dumps(obj), flush=True)


def buffers(kind):
    n = CHUNK
    if kind in ("h2d", "d2h", "both"):
        host_src = torch.empty(n, dtype=torch.uint8, pin_memory=True).fill_(1)
        host_dst = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        dev_src = torch.ones(n, dtype=torch.uint8, device="cuda:0")
        dev_dst = torch.empty(n, dtype=torch.uint8, device="cuda:0")
        return host_src, host_dst, dev_src, dev_dst
    a0 = torch.ones(n, dtype=torch.uint8, device="cuda:0")
    b0 = torch.empty(n, dtype=torch.uint8, device="cuda:0")
    a1 = torch.ones(n, dtype=torch.uint8, device="cuda:1")
    b1 = torch.empty(n, dtype=torch.uint8, device="cuda:1")
    return a0, b0, a1, b1


def run_phase(name, kind, seconds):
    say({"phase": name, "kind": kind, "event": "start", "t": time.time()})
    end_at = time.time() + seconds
    if kind == "idle":
        time.sleep(seconds)
        say({"phase": name, "kind": kind, "event": "end", "t": time.time()})
        return []
    b = buffers(kind)
    s0 = torch.cuda.Stream(device="cuda:0")
    s1 = torch.cuda.Stream(device="cuda:1") if kind.startswith("p2p") else torch.cuda.Stream(device="cuda:0")
    torch.cuda.synchronize("cuda:0")
    rates = []
    while time.time() < end_at:
        start = time.time()
        moved = {}
        while time.time() - start < BATCH_S:
            if kind == "h2d":
                b[3].copy_(b[0], non_blocking=True)
                moved["h2d"] = moved.get("h2d", 0) + CHUNK
            elif kind == "d2h":
                b[1].copy_(b[2], non_blocking=True)
                moved["d2h"] = moved.get("d2h", 0) + CHUNK
            elif kind == "both":
                with torch.cuda.stream(s0):
                    b[3].copy_(b[0], non_blocking=True)
                with torch.cuda.stream(s1):
                    b[1].copy_(b[2], non_blocking=True)
                moved["h2d"] = moved.get("h2d", 0) + CHUNK
                moved["d2h"] = moved.get("d2h", 0) + CHUNK
            elif kind in ("p2p01", "p2pboth"):
                with torch.cuda.stream(s0):
                    b[3].copy_(b[0], non_blocking=True)  # GPU 0 -> GPU 1
                moved["p2p01"] = moved.get("p2p01", 0) + CHUNK
            if kind in ("p2p10", "p2pboth"):
                with torch.cuda.stream(s1):
                    b[1].copy_(b[2], non_blocking=True)  # GPU 1 -> GPU 0
                moved["p2p10"] = moved.get("p2p10", 0) + CHUNK
            s0.synchronize()
            s1.synchronize()
            torch.cuda.synchronize("cuda:0")
            if kind.startswith("p2p"):
                torch.cuda.synchronize("cuda:1")
        end = time.time()
        for k, v in moved.items():
            say({"phase": name, "kind": k, "start": start, "end": end, "bytes": v})
            rates.append((k, v / (end - start)))
    say({"phase": name, "kind": kind, "event": "end", "t": time.time()})
    return rates


def overhead(binary, blocks=6, block_s=4.0):
    """h2d rate in blocks, alternately with `watch` running (interval 1 s, then 0.1 s) and not."""
    for interval in ("1s", "100ms"):
        for i in range(blocks):
            for with_watch in (False, True):
                proc = None
                if with_watch:
                    proc = subprocess.Popen(
                        [binary, "watch", "--interval", interval, "--quiet"],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                    time.sleep(1.5)  # NVML opened, the first interval begun
                rates = run_phase(f"overhead-{interval}-{i}-{'on' if with_watch else 'off'}", "h2d", block_s)
                total = sum(r for _, r in rates) / max(len(rates), 1)
                say({"overhead": interval, "block": i, "watch": with_watch, "h2d_bytes_per_s": total})
                if proc:
                    proc.terminate()
                    proc.wait()
                time.sleep(0.5)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--overhead":
        overhead(sys.argv[2])
        return
    for part in sys.argv[1].split(","):
        kind, secs = part.split(":")
        run_phase(kind, kind, float(secs))


if __name__ == "__main__":
    main()
