#!/usr/bin/env python3
"""Compares a soak.csv (scalescope check --soak) with what was read beside it: nvidia-smi
--query-gpu ... -lms 1000 (CSV with a timestamp) and the PyTorch matmul loop that ran right after
(soak_matmul.py's JSON lines). Prints per-metric mean differences over the seconds both saw.

Usage: soak_compare.py SOAK.CSV SOAK.JSON SMI.CSV MATMUL.JSONL
"""
import csv, datetime, json, statistics, sys

soak_csv, soak_json, smi_csv, matmul = sys.argv[1:5]
report = json.load(open(soak_json))
started = (report.get("soak") or {}).get("started_at")
if started is None:
    # check --json holds the health report; the soak's start comes from the CLI's report file.
    sys.exit("no soak.started_at in " + soak_json)
t0 = datetime.datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp()
ours = {}
gemm = []
for r in csv.DictReader(open(soak_csv)):
    t = t0 + float(r["time_s"])
    ours[(int(r["gpu"]), round(t))] = r
    if r["phase"] == "gemm" and r["rate"]:
        gemm.append((float(r["time_s"]), float(r["rate"])))
smi = {}
for r in csv.reader(open(smi_csv)):
    if not r or r[0].startswith("timestamp"):
        continue
    ts = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
    # nvidia-smi prints local time; the device machine runs in UTC.
    t = ts.replace(tzinfo=datetime.timezone.utc).timestamp()
    smi[(int(r[1]), round(t))] = [c.strip() for c in r[2:]]
fields = ["power_w", "sm_clock_mhz", "mem_clock_mhz", "gpu_temp_c", "mem_temp_c"]
diffs = {f: [] for f in fields}
for key, row in ours.items():
    s = smi.get(key)
    if s is None:
        continue
    for f, v in zip(fields, s):
        try:
            a, b = float(row[f]), float(v.split()[0])
        except (ValueError, IndexError):
            continue
        diffs[f].append((a, b))
print("seconds compared:", len(ours), "rows,", sum(1 for k in ours if k in smi), "matched with nvidia-smi")
for f, pairs in diffs.items():
    if not pairs:
        print(f"{f}: not compared (absent on one side)")
        continue
    ma = statistics.mean(a for a, _ in pairs)
    mb = statistics.mean(b for _, b in pairs)
    mad = statistics.mean(abs(a - b) for a, b in pairs)
    print(f"{f}: scalescope mean {ma:.1f}, nvidia-smi mean {mb:.1f}, mean |diff| {mad:.2f} "
          f"({(ma - mb) / mb * 100:+.2f} % of means) over {len(pairs)} s")
settled = [r for t, r in gemm]
ref = [json.loads(l) for l in open(matmul) if l.strip()]
summary = [r for r in ref if r.get("summary")]
windows = [r["tflops"] for r in ref if "tflops" in r]
if settled and windows:
    ours_med = statistics.median(settled[-60:])
    theirs = statistics.median(windows)
    print(f"GEMM: scalescope last 60 gemm seconds median {ours_med:.1f} TFLOP/s (all gemm seconds "
          f"{statistics.median(settled):.1f}); PyTorch matmul loop right after: median {theirs:.1f} "
          f"TFLOP/s over {len(windows)} s; difference {(ours_med - theirs) / theirs * 100:+.2f} %")
