#!/usr/bin/env bash
# The SM-copy tuning sweep recorded in docs/BENCHMARKS.md: p2p_read_sm and p2p_write_sm at
# 512 MiB between GPUs 0 and 1 under each copy-kernel experiment (the hidden --copy-* flags of
# `bench bandwidth`, src/cli/copy_kernel.rs), one line per configuration.
# Usage: scripts/sm-copy-tuning.sh [OUTDIR]   (binary: .gpucheck/scalescope or target/release)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-sm-copy-tuning}}
mkdir -p "$out"
bin=.gpucheck/scalescope
[ -x "$bin" ] || bin=target/release/scalescope
configs=(
    ""
    "--copy-variant 1"
    "--copy-variant 2"
    "--copy-variant 3"
    "--copy-variant 4"
    "--copy-variant 5"
    "--copy-contiguous"
    "--copy-contiguous --copy-variant 3"
    "--copy-grid 16"
    "--copy-grid 32"
    "--copy-grid 64"
    "--copy-grid 96"
    "--copy-grid 132"
    "--copy-sm-split 0.5"
    "--copy-sm-split 0.35"
    "--copy-sm-split 0.5 --copy-variant 3"
    ""
)
printf '%-55s %s\n' "configuration" "read 0→1, 1→0 / write 0→1, 1→0 (GB/s, median)" | tee "$out/summary.txt"
i=0
for c in "${configs[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$bin" bench bandwidth --gpus 0,1 --tests p2p_read_sm,p2p_write_sm --sizes 512M $c \
        --csv "$out/sweep-$i.csv" > "$out/sweep-$i.txt" 2>&1
    figures=$(awk -F, 'NR > 1 { printf "%s %s→%s %.1f (wrong %s)  ", $1, $3, $4, $7, $13 }' "$out/sweep-$i.csv" 2>/dev/null)
    printf '%-55s %s\n' "${c:-default}" "${figures:-failed: $(tail -1 "$out/sweep-$i.txt")}" | tee -a "$out/summary.txt"
done
