#!/usr/bin/env bash
# scalescope's 1-GPU step and power beside a plain training loop (scripts/plain_train.py) of the
# same workload running at the same time on another GPU of the machine: on VMs whose host speed
# wanders in spells of seconds, only steps timed in the same seconds compare (a host-bound step
# follows the host). scalescope measures on GPU 0 (`bench scaling --measure --gpus 0`), the plain
# loop runs on GPU 1 in blocks of 1.5 s for as long; every GPU's energy counter is read every
# 10 ms by scripts/energy_sampler.py. scripts/beside_compare.py prints the table.
# Usage: scripts/beside-check.sh OUTDIR [BIN] WORKLOAD…   (resnet50, bert-large, gpt2-xl)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}; shift
bin=${1:-target/release/scalescope}; shift
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
python3 scripts/energy_sampler.py --gpu 0 --every-ms 10 --out "$out/sampler-0.csv" & s0=$!
python3 scripts/energy_sampler.py --gpu 1 --every-ms 10 --out "$out/sampler-1.csv" & s1=$!
trap 'kill $s0 $s1 2>/dev/null' EXIT
for w in "$@"; do
    case $w in
        resnet50) args=(--model resnet50 --micro 256 --blocks 50) ;;
        bert-large) args=(--model bert-large --micro 64 --blocks 60) ;;
        gpt2-xl) args=(--model gpt2-xl --micro 8 --blocks 50) ;;
    esac
    CUDA_VISIBLE_DEVICES=1 timeout 200 python3 scripts/plain_train.py "${args[@]}" \
        --block-s 1.5 --warmup-s 3 --tag "$w" >> "$out/plain.jsonl" 2>> "$out/plain.err" &
    plain=$!
    sleep 8
    timeout 170 "$bin" bench scaling --measure --gpus 0 --workload "$w" --mode weak \
        --json "$out/ours-$w.json" > "$out/ours-$w.txt" 2> "$out/ours-$w.err"
    echo "scalescope $w: exit $?" >&2
    wait "$plain"
done
