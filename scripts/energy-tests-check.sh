#!/usr/bin/env bash
# Energy of the copy tests, collectives and GEMM probe on GPU 0 beside two readers scalescope did
# not write into its figures: the NVML energy counter read by a separate process
# (scripts/energy_sampler.py, every 10 ms) and `nvidia-smi --query-gpu=power.draw.instant` every
# 50 ms, over each test's window (scripts/energy_tests_compare.py).
# Usage: scripts/energy-tests-check.sh OUTDIR [BIN] [WINDOW_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}
bin=${2:-target/release/scalescope}
window=${3:-2}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr ' ' '-')
python3 scripts/energy_sampler.py --gpu 0 --every-ms 10 --out "$out/tests-sampler-$kind.csv" &
sampler=$!
nvidia-smi --query-gpu=timestamp,power.draw.instant --format=csv,noheader,nounits -i 0 -lms 50 \
    > "$out/tests-smi-$kind.csv" &
smi=$!
sleep 1
"$bin" bench bandwidth --gpus 0 --tests h2d,d2h,h2d_bidir,local_copy --sizes 512M \
    --energy-window "$window" --json "$out/bw-$kind.json" > "$out/bw-$kind.txt" 2>&1
echo "bandwidth exit $?"
"$bin" bench bandwidth --gpus 0 --tests h2d,d2h,local_copy --sizes 512M \
    --json "$out/bw-default-$kind.json" > "$out/bw-default-$kind.txt" 2>&1
echo "bandwidth (no window) exit $?"
"$bin" bench collectives --gpus 0 --ops all_reduce --sizes 1M,64M,1G --energy-window "$window" \
    --json "$out/coll-$kind.json" > "$out/coll-$kind.txt" 2>&1
echo "collectives exit $?"
sleep 1
kill "$sampler" "$smi"; wait "$sampler" "$smi" 2>/dev/null
cat "$out/bw-$kind.txt" "$out/bw-default-$kind.txt" "$out/coll-$kind.txt" | grep -v '^$' | tail -40
python3 scripts/energy_tests_compare.py "$out/bw-$kind.json" "$out/coll-$kind.json" \
    "$out/tests-sampler-$kind.csv" "$out/tests-smi-$kind.csv" | tee "$out/energy-tests-compare-$kind.txt"
python3 - "$out/bw-default-$kind.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for r in run["results"]:
    e = r.get("energy")
    print(f"default window: {r['test']:<12} {r.get('median_gbps') or 0:8.1f} GB/s  "
          + (f"{e['mean_power_w']:.1f} W over {e['seconds']:.2f} s" if e else "no energy"))
for w in run.get("warnings", []):
    print("warning:", w)
PY
