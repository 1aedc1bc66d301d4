#!/usr/bin/env python3
"""The reference beside `scalescope check --soak`: a plain PyTorch bf16 matmul loop (8192^3, as
the soak's GEMM), timed with CUDA events in batches of ~200 ms for SECONDS, printing one JSON
line per second-long window and a summary. With --after S it waits S seconds first, and with
--label it names itself (the competing process of the jitter test uses the same loop).

Usage: soak_matmul.py SECONDS [--after S] [--gpu N] [--label NAME]
"""
import argparse, json, statistics, sys, time

import torch

p = argparse.ArgumentParser()
p.add_argument("seconds", type=float)
p.add_argument("--after", type=float, default=0.0)
p.add_argument("--gpu", type=int, default=0)
p.add_argument("--label", default="pytorch")
a = p.parse_args()
time.sleep(a.after)
torch.cuda.set_device(a.gpu)
d = 8192
g = torch.Generator(device="cuda").manual_seed(1)
x = (torch.rand(d, d, device="cuda", generator=g) + 0.5).to(torch.bfloat16)
y = (torch.rand(d, d, device="cuda", generator=g) + 0.5).to(torch.bfloat16)
x = x * torch.where(torch.rand(d, d, device="cuda", generator=g) < 0.5, -1, 1).to(torch.bfloat16)
out = torch.empty(d, d, device="cuda", dtype=torch.bfloat16)
flop = 2 * d ** 3
for _ in range(5):
    torch.matmul(x, y, out=out)
torch.cuda.synchronize()
t_end = time.time() + a.seconds
per = 2e-3
rates = []
start = time.time()
while time.time() < t_end:
    window_flop, window_ms, w0 = 0, 0.0, time.time()
    while time.time() - w0 < 1.0:
        n = max(1, int(0.2 / per))
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(n):
            torch.matmul(x, y, out=out)
        e1.record()
        e1.synchronize()
        ms = e0.elapsed_time(e1)
        per = ms / n / 1e3
        window_flop += n * flop
        window_ms += ms
    r = window_flop / (window_ms / 1e3) / 1e12
    rates.append(r)
    print(json.dumps({"label": a.label, "t_s": round(time.time() - start, 1), "tflops": round(r, 2)}), flush=True)
print(json.dumps({"label": a.label, "summary": True, "windows": len(rates),
                  "median_tflops": statistics.median(rates) if rates else None,
                  "last_60s_median": statistics.median(rates[-60:]) if rates else None}), flush=True)
