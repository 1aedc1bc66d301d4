#!/usr/bin/env bash
# The soak's checks on a GPU machine (docs/VERIFIED.md, "Burn-in"). Stage 1: a 5-minute soak
# (as the --bench stage, so that report.json and the documents come with it) with nvidia-smi
# sampling beside it, then a plain PyTorch bf16 matmul loop for 60 s; compared by
# soak_compare.py. Stage 2: a 2-minute GEMM soak with a second process multiplying on the same
# GPU from 0:40 for 30 s (the verdict must flag the jitter and its window), and a 1-minute soak
# with one result altered on purpose (--test-corrupt-gemm: FAIL naming the GPU and element).
# Usage: scripts/soak-check.sh 1|2 OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
stage=$1 out=$2
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
bin=/tmp/soak-bin/scalescope
mkdir -p /tmp/soak-bin
[ -x "$bin" ] || { xz -dc .gpucheck/scalescope.xz > "$bin" && chmod +x "$bin"; }
nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
if [ "$stage" = 1 ]; then
    nvidia-smi --query-gpu=timestamp,index,power.draw.average,clocks.sm,clocks.mem,temperature.gpu,temperature.memory \
        --format=csv,noheader -lms 1000 > "$out/smi.csv" &
    smi=$!
    date -u +%FT%T.%3NZ > "$out/soak5-start.txt"
    "$bin" --bench --suite health --soak 5m --out "$out/soak5" > "$out/soak5.txt" 2>&1
    echo "soak exit $?" | tee -a "$out/soak5.txt"
    kill $smi
    python3 scripts/soak_matmul.py 60 > "$out/matmul.jsonl" 2> "$out/matmul.err"
    python3 scripts/soak_compare.py "$out/soak5/soak.csv" "$out/soak5/report.json" "$out/smi.csv" "$out/matmul.jsonl" | tee "$out/compare.txt"
    tail -30 "$out/soak5.txt"
else
    python3 scripts/soak_matmul.py 30 --after 40 --label competitor > "$out/competitor.jsonl" 2>&1 &
    "$bin" check --quick --soak 2m --soak-load gemm --soak-csv "$out/compete.csv" > "$out/compete.txt" 2>&1
    echo "exit $?" | tee -a "$out/compete.txt"
    wait
    grep -E "soak_|verdict|competitor" "$out/compete.txt"; head -3 "$out/competitor.jsonl"; tail -2 "$out/competitor.jsonl"
    "$bin" check --quick --soak 1m --soak-load gemm,memory,pcie --soak-csv "$out/corrupt.csv" --test-corrupt-gemm 0@20 > "$out/corrupt.txt" 2>&1
    echo "exit $?" | tee -a "$out/corrupt.txt"
    grep -E "soak_|verdict|wrong" "$out/corrupt.txt"
fi
