#!/usr/bin/env bash
# Power of a plain training loop at several per-GPU batches (docs/BENCHMARKS.md, "Modeled power
# of steps the host sets"): scripts/plain_train.py for each (model, batch) on GPU 0 while
# scripts/energy_sampler.py reads the NVML energy counter every 10 ms in another process; prints
# the idle power before the first run, then per run its step and the mean power over its timed
# blocks. Needs PyTorch and one GPU.
# Usage: scripts/power-sweep.sh OUTDIR ["model batch" ...]   (default: resnet50 16/32/64/256,
#        bert-large 8/64)
set -u
[ $# -ge 1 ] || { sed -n '2,8p' "$0"; exit 2; }
O=$1; shift; mkdir -p "$O"
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- "resnet50 16" "resnet50 32" "resnet50 64" "resnet50 256" "bert-large 8" "bert-large 64"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
python3 scripts/energy_sampler.py --gpu 0 --every-ms 10 --out "$O/energy.csv" & s=$!
sleep 3; date +%s.%N > "$O/idle_end"
for spec in "$@"; do
  read -r model batch <<< "$spec"
  python3 scripts/plain_train.py --model "$model" --micro "$batch" --warmup-s 4 --blocks 3 \
    --block-s 2 --tag "$model $batch" >> "$O/plain.jsonl" 2>> "$O/plain.err"
done
kill $s; wait $s
python3 - "$O" <<'PY'
import csv, json, sys
o = sys.argv[1]
rows = [(float(r["t_unix"]), float(r["energy_mj"]))
        for r in csv.DictReader(open(f"{o}/energy.csv")) if r["energy_mj"]]
def e_at(t):
    for (t0, e0), (t1, e1) in zip(rows, rows[1:]):
        if t0 <= t <= t1:
            return e0 + (e1 - e0) * (t - t0) / (t1 - t0) if t1 > t0 else e0
    return None
idle_end = float(open(f"{o}/idle_end").read())
t0 = rows[0][0]
print(f"idle W: {(e_at(idle_end) - e_at(t0 + 0.5)) / 1e3 / (idle_end - t0 - 0.5):.1f}")
for line in open(f"{o}/plain.jsonl"):
    d = json.loads(line)
    a, b = d["window_t"]
    print(d.get("tag"), f"step {d['step_ms']:.2f} ms", f"W {(e_at(b) - e_at(a)) / 1e3 / (b - a):.1f}",
          d["block_ms"])
PY
