#!/usr/bin/env bash
# Energy of real training steps beside two readers scalescope did not write into its figures:
# the NVML energy counter read by a separate process (scripts/energy_sampler.py, every 10 ms)
# and `nvidia-smi --query-gpu=power.draw.instant` sampled every 50 ms, both integrated over each
# row's timed window (scripts/energy_compare.py). One GPU (GPU 0).
# Usage: scripts/energy-check.sh OUTDIR [BIN] [WORKLOAD…]
# Without workloads it runs `--bench --full --suite scaling` (the real steps of ResNet-50,
# BERT-large, GPT-2 XL and ResNet-50 fp16) and keeps its report in OUTDIR/report-GPU, which
# `scalescope compare` reads; with workloads, `bench scaling --measure` of those.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}; shift
bin=${1:-target/release/scalescope}; shift || true
workloads=("$@")
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr ' ' '-')
python3 scripts/energy_sampler.py --gpu 0 --every-ms 10 --out "$out/sampler-$kind.csv" &
sampler=$!
nvidia-smi --query-gpu=timestamp,power.draw.instant --format=csv,noheader,nounits -i 0 -lms 50 \
    > "$out/smi-$kind.csv" &
smi=$!
sleep 1
if [ ${#workloads[@]} -eq 0 ]; then
    args=(--bench --full --suite scaling --gpus 0 --out "$out/report-$kind")
    json="$out/report-$kind/report.json"
else
    args=(bench scaling --measure --gpus 0 --mode weak --json "$out/scaling-$kind.json" --csv "$out/scaling-$kind.csv")
    for w in "${workloads[@]}"; do args+=(--workload "$w"); done
    json="$out/scaling-$kind.json"
fi
"$bin" "${args[@]}" > "$out/scaling-$kind.txt" 2> "$out/scaling-$kind.err"
rc=$?
sleep 1
kill "$sampler" "$smi"; wait "$sampler" "$smi" 2>/dev/null
echo "scalescope exit $rc"; cat "$out/scaling-$kind.txt"; tail -5 "$out/scaling-$kind.err"
python3 scripts/energy_compare.py "$json" "$out/sampler-$kind.csv" "$out/smi-$kind.csv" \
    | tee "$out/energy-compare-$kind.txt"
