#!/usr/bin/env bash
# The SM-copy tuning sweep recorded in docs/BENCHMARKS.md: p2p_read_sm and p2p_write_sm at
# 512 MiB between GPUs 0 and 1 under each copy-kernel experiment (environment knobs read by
# src/bench/cuda/{nvrtc,kernels,cases}.rs), one line per configuration.
# Usage: scripts/sm-copy-tuning.sh [OUTDIR]   (binary: .gpucheck/scalescope or target/release)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-sm-copy-tuning}}
mkdir -p "$out"
bin=.gpucheck/scalescope
[ -x "$bin" ] || bin=target/release/scalescope
knobs=(SCALESCOPE_COPY_VARIANT SCALESCOPE_COPY_LAYOUT SCALESCOPE_COPY_GRID SCALESCOPE_COPY_BLOCKS_PER_SM
    SCALESCOPE_COPY_UNROLL SCALESCOPE_SM_SPLIT SCALESCOPE_COPY_KERNEL)
configs=(
    ""
    "SCALESCOPE_COPY_VARIANT=1"
    "SCALESCOPE_COPY_VARIANT=2"
    "SCALESCOPE_COPY_VARIANT=3"
    "SCALESCOPE_COPY_VARIANT=4"
    "SCALESCOPE_COPY_VARIANT=5"
    "SCALESCOPE_COPY_LAYOUT=1"
    "SCALESCOPE_COPY_LAYOUT=1 SCALESCOPE_COPY_VARIANT=3"
    "SCALESCOPE_COPY_GRID=16"
    "SCALESCOPE_COPY_GRID=32"
    "SCALESCOPE_COPY_GRID=64"
    "SCALESCOPE_COPY_GRID=96"
    "SCALESCOPE_COPY_GRID=132"
    "SCALESCOPE_SM_SPLIT=0.5"
    "SCALESCOPE_SM_SPLIT=0.35"
    "SCALESCOPE_SM_SPLIT=0.5 SCALESCOPE_COPY_VARIANT=3"
    ""
)
printf '%-55s %s\n' "configuration" "read 0→1, 1→0 / write 0→1, 1→0 (GB/s, median)" | tee "$out/summary.txt"
i=0
for c in "${configs[@]}"; do
    i=$((i + 1))
    for k in "${knobs[@]}"; do unset "$k"; done
    # shellcheck disable=SC2086
    [ -n "$c" ] && export $c
    "$bin" bench bandwidth --gpus 0,1 --tests p2p_read_sm,p2p_write_sm --sizes 512M \
        --csv "$out/sweep-$i.csv" > "$out/sweep-$i.txt" 2>&1
    figures=$(awk -F, 'NR > 1 { printf "%s %s→%s %.1f (wrong %s)  ", $1, $3, $4, $7, $13 }' "$out/sweep-$i.csv" 2>/dev/null)
    printf '%-55s %s\n' "${c:-default}" "${figures:-failed: $(tail -1 "$out/sweep-$i.txt")}" | tee -a "$out/summary.txt"
done
