#!/usr/bin/env bash
# Energy of the copy tests and collectives beside two readers scalescope did not write into its
# figures: the NVML energy counter of each GPU read by a separate process
# (scripts/energy_sampler.py, every 10 ms) and `nvidia-smi --query-gpu=power.draw.instant` every
# 50 ms, over each test's window (scripts/energy_tests_compare.py).
# Usage: scripts/energy-tests-check.sh OUTDIR [BIN] [WINDOW_S] [GPUS]
# GPUS: 0 (default: host and local copies; collectives need two) or 0,1 (adds GPU↔GPU copies and
# all-reduce over both).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}
bin=${2:-target/release/scalescope}
window=${3:-2}
gpus=${4:-0}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr ' ' '-')
pids=()
samplers=()
smis=()
for g in ${gpus//,/ }; do
    python3 scripts/energy_sampler.py --gpu "$g" --every-ms 10 --out "$out/tests-sampler-$kind-$g.csv" &
    pids+=($!)
    samplers+=("$out/tests-sampler-$kind-$g.csv")
    nvidia-smi --query-gpu=timestamp,power.draw.instant --format=csv,noheader,nounits -i "$g" -lms 50 \
        > "$out/tests-smi-$kind-$g.csv" &
    pids+=($!)
    smis+=("$out/tests-smi-$kind-$g.csv")
done
sleep 1
tests=h2d,d2h,h2d_bidir,local_copy
[ "$gpus" != 0 ] && tests=h2d,local_copy,p2p_read_ce,p2p_bidir_ce,p2p_write_sm
"$bin" bench bandwidth --gpus "$gpus" --tests "$tests" --sizes 512M \
    --energy-window "$window" --json "$out/bw-$kind.json" > "$out/bw-$kind.txt" 2>&1
echo "bandwidth exit $?"
"$bin" bench bandwidth --gpus "$gpus" --tests "$tests" --sizes 512M \
    --json "$out/bw-default-$kind.json" > "$out/bw-default-$kind.txt" 2>&1
echo "bandwidth (no window) exit $?"
"$bin" bench collectives --gpus "$gpus" --ops all_reduce --sizes 1M,64M,1G --energy-window "$window" \
    --json "$out/coll-$kind.json" > "$out/coll-$kind.txt" 2>&1
echo "collectives exit $?"
sleep 1
kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null
cat "$out/bw-$kind.txt" "$out/bw-default-$kind.txt" "$out/coll-$kind.txt" | grep -v '^$' | tail -40
python3 scripts/energy_tests_compare.py "$out/bw-$kind.json" "$out/coll-$kind.json" \
    "$(IFS=,; echo "${samplers[*]}")" "$(IFS=,; echo "${smis[*]}")" \
    | tee "$out/energy-tests-compare-$kind.txt"
python3 - "$out/bw-default-$kind.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for r in run["results"]:
    e = r.get("energy")
    print(f"default window: {r['test']:<12} {r['src']}->{r['dst']} {r.get('median_gbps') or 0:8.1f} GB/s  "
          + (f"{e['mean_power_w']:.1f} W over {e['seconds']:.2f} s" if e else "no energy"))
for w in run.get("warnings", []):
    print("warning:", w)
PY
