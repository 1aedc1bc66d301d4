#!/usr/bin/env bash
# scalescope's scaling figures beside a plain training loop it did not write
# (scripts/plain_train.py), on the same machine, interleaved: for each workload the plain step on
# 1 GPU and under DDP on 2 (and 4 where the machine has them), and `scalescope bench scaling
# --measure` of the same workload, scalescope first in even rounds (the plain 1-GPU cases then
# go first) and last in odd ones (the plain 1-GPU cases then go last). A separate process reads every GPU's NVML energy counter every 10 ms
# (scripts/energy_sampler.py), so the plain steps' power can be set beside scalescope's W/GPU.
# scripts/scaling_compare.py prints the table (docs/BENCHMARKS.md, "Against a plain training
# loop").
# Usage: scripts/scaling-check.sh OUTDIR [BIN] [ROUNDS] [GROUP…]   (groups: cnn — ResNet-50
# weak and strong, one scalescope run; lm — BERT-large and GPT-2 XL weak, one scalescope run;
# bert, gpt — either half of lm alone, where lm on four GPUs would outlast one call; default
# cnn and lm). BESIDE=1 first runs each 1-GPU case twice at once, scalescope on GPU 0 and the
# plain loop on the last GPU (the same host spells for both: beside()).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}; shift
bin=${1:-target/release/scalescope}; shift || true
rounds=${1:-1}; shift || true
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(cnn lm)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
n=$(( gpus >= 4 ? 4 : gpus >= 2 ? 2 : 1 ))
counts=(); [ "$n" -ge 2 ] && counts+=(2); [ "$n" -ge 4 ] && counts+=(4)
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
samplers=()
for g in $(seq 0 $((gpus - 1))); do
    python3 scripts/energy_sampler.py --gpu "$g" --every-ms 10 --out "$out/sampler-$g.csv" &
    samplers+=($!)
done
trap 'kill "${samplers[@]}" 2>/dev/null' EXIT

plain() { # NAME MODEL MICRO ACC NGPUS ROUND
    local log="$out/plain.jsonl"
    # A host-bound step (BERT-large: its host floor 95 % of the step) follows the VM host's
    # speed, which wanders in spells of seconds: it is timed over 12 blocks (18 s, near
    # scalescope's grown window of 12–20 s) instead of 5, so that both cover several spells.
    local blocks=5
    [ "$2" = bert-large ] && blocks=12
    if [ "$5" = 1 ]; then
        CUDA_VISIBLE_DEVICES=0 timeout 300 python3 scripts/plain_train.py --model "$2" \
            --micro "$3" --accumulate "$4" --tag "$1-r$6" --warmup-s 4 --block-s 1.5 \
            --blocks "$blocks" >> "$log" 2>> "$out/plain.err"
    else
        CUDA_VISIBLE_DEVICES=$(seq -s, 0 $(($5 - 1))) timeout 300 python3 -m torch.distributed.run \
            --standalone --nproc_per_node="$5" scripts/plain_train.py --model "$2" \
            --micro "$3" --accumulate "$4" --tag "$1-r$6" --warmup-s 4 --block-s 1.5 \
            --blocks "$blocks" >> "$log" 2>> "$out/plain.err"
    fi
    echo "plain $1 on $5 GPU(s): exit $?" >&2
}

ours() { # GROUP ROUND MODE WORKLOAD…
    local g=$1 r=$2 mode=$3; shift 3
    local args=(bench scaling --measure --gpus "$(seq -s, 0 $((n - 1)))" --mode "$mode"
        --max-gpus "$n" --json "$out/ours-$g-r$r.json")
    for w in "$@"; do args+=(--workload "$w"); done
    timeout 560 "$bin" "${args[@]}" > "$out/ours-$g-r$r.txt" 2> "$out/ours-$g-r$r.err"
    echo "scalescope $g round $r: exit $?" >&2
}

plains() { # GROUP ROUND: the plain loop's cases of a group, the 1-GPU ones as close to
    # scalescope's run as the order allows: in odd rounds (plain first) the n-GPU cases run
    # first and BERT-large (host-bound) last; in even rounds (scalescope first, its n-GPU
    # launches and probe after its 1-GPU one) the 1-GPU case goes first. The VM hosts' speed
    # drifts over minutes, and a host-bound step follows it: BESIDE=1 (beside()) times the
    # 1-GPU cases at the same moment instead.
    local gpt_micro=8 many=(1 "${counts[@]}")
    [ "$mem" -lt 100000 ] && gpt_micro=4
    [ $(($2 % 2)) = 1 ] && many=("${counts[@]}" 1)
    case $1 in
        cnn)
            for k in "${many[@]}"; do plain resnet50 resnet50 256 1 "$k" "$2"; done
            for k in "${many[@]}"; do plain resnet50-strong resnet50 256 $((4 / k)) "$k" "$2"; done
            ;;
        lm)
            if [ $(($2 % 2)) = 1 ]; then plains gpt "$2"; plains bert "$2"
            else plains bert "$2"; plains gpt "$2"; fi
            ;;
        bert)
            for k in "${many[@]}"; do plain bert-large bert-large 64 1 "$k" "$2"; done
            ;;
        gpt)
            for k in "${many[@]}"; do
                plain gpt2-xl gpt2-xl "$gpt_micro" $((8 / gpt_micro)) "$k" "$2"
            done
            ;;
    esac
}

beside() { # GROUP ROUND: each 1-GPU case of the group twice at the same time — scalescope's
    # 1-GPU run on GPU 0, the plain loop on the last GPU — so that both meet the same host
    # spells (BESIDE=1, machines with 2 GPUs or more). The plain loop runs 60 blocks of 1.5 s,
    # longer than scalescope's 1-GPU run; scaling_compare.py takes its blocks inside
    # scalescope's timed window (its energy window: NVML must read the counter). Both processes
    # are host-bound and share the host's CPUs meanwhile: the figures are the host's speed with
    # both running, the same for the two.
    local last=$((gpus - 1)) ws=() cases=()
    case $1 in
        cnn) ws=(resnet50); cases=("resnet50 256 1" "resnet50-strong 256 4") ;;
        bert) ws=(bert-large); cases=("bert-large 64 1") ;;
        gpt) ws=(gpt2-xl); cases=("gpt2-xl 8 1") ;;
        lm) beside bert "$2"; beside gpt "$2"; return ;;
    esac
    local c tag micro acc model mode pid
    for c in "${cases[@]}"; do
        read -r tag micro acc <<< "$c"
        model=${tag%-strong} mode=weak
        [ "$tag" = resnet50-strong ] && mode=strong
        [ "$model" = gpt2-xl ] && [ "$mem" -lt 100000 ] && micro=4 acc=2
        CUDA_VISIBLE_DEVICES=$last timeout 300 python3 scripts/plain_train.py --model "$model" \
            --micro "$micro" --accumulate "$acc" --tag "$tag-beside-r$2" --warmup-s 4 \
            --block-s 1.5 --blocks 60 >> "$out/plain.jsonl" 2>> "$out/plain.err" &
        pid=$!
        timeout 300 "$bin" bench scaling --measure --gpus 0 --max-gpus 1 --mode "$mode" \
            --workload "${ws[0]}" --json "$out/beside-$tag-r$2.json" \
            > "$out/beside-$tag-r$2.txt" 2> "$out/beside-$tag-r$2.err"
        echo "scalescope $tag on GPU 0 beside the plain loop on GPU $last, round $2: exit $?" >&2
        wait "$pid"
        echo "plain $tag on GPU $last beside it: exit $?" >&2
    done
}

# FIRST_ROUND=k starts the numbering (and the order flip) at round k: a later call goes on
# where an earlier one stopped.
for r in $(seq "${FIRST_ROUND:-1}" "$rounds"); do
    for g in "${groups[@]}"; do
        case $g in
            cnn) run_ours() { ours cnn "$r" both resnet50; } ;;
            lm) run_ours() { ours lm "$r" weak bert-large gpt2-xl; } ;;
            bert) run_ours() { ours bert "$r" weak bert-large; } ;;
            gpt) run_ours() { ours gpt "$r" weak gpt2-xl; } ;;
        esac
        [ "${BESIDE:-0}" = 1 ] && [ "$gpus" -ge 2 ] && beside "$g" "$r"
        if [ $((r % 2)) = 1 ]; then
            plains "$g" "$r"; run_ours
        else
            run_ours; plains "$g" "$r"
        fi
    done
done
kill "${samplers[@]}" 2>/dev/null; wait 2>/dev/null
python3 scripts/scaling_compare.py "$out" | tee "$out/compare.txt"
