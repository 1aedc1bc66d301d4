#!/usr/bin/env bash
# `scalescope fleet run --slurm --between` on one GPU machine (docs/VERIFIED.md, "Fleet: between
# nodes"): a pretend allocation whose nodes are this host's GPUs, one per node, through
# scripts/slurm_standin.py (srun and scontrol stood in; the job steps, NCCL_COMM_ID and the
# multi-process NCCL path are scalescope's own), then nccl-tests' all_reduce_perf over the first
# two GPUs with the same NCCL settings as the reference for pair n1+n2.
#   a: NCCL as it chooses (NVLink/P2P between the pretend nodes)
#   b: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1: NCCL goes through its network transport
#   c: as a, with a PyTorch matmul loop hogging the third GPU (node n3) during the runs: the node
#      whose every pair is slow must be named
#   nccl-tests over GPUs 0,1 (a, b) and, with the hog running, over GPUs 1,2 (pair n2+n3 of c)
# Usage: scripts/between-check.sh OUTDIR [RUNS]   (RUNS: default "a b c"; nccl-tests sources in
# .gpucheck/anchors/nccl-tests; every fleet folder comes back as OUTDIR/fleets.tgz)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1
runs=${2:-a b c}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bin=/tmp/between-bin/scalescope
mkdir -p /tmp/between-bin
[ -x "$bin" ] || { xz -dc .gpucheck/scalescope.xz > "$bin" && chmod +x "$bin"; }
ln -sf "$PWD/scripts/slurm_standin.py" /tmp/between-bin/srun
ln -sf "$PWD/scripts/slurm_standin.py" /tmp/between-bin/scontrol
chmod +x scripts/slurm_standin.py
nccl=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])')
export SCALESCOPE_NCCL_LIB=$nccl/lib/libnccl.so.2

# nccl-tests against the same NCCL (PyTorch's), in the background while the fleet runs start.
(
    mkdir -p /tmp/ncclh/lib && ln -sf "$nccl/include" /tmp/ncclh/include
    ln -sf "$nccl/lib/libnccl.so.2" /tmp/ncclh/lib/libnccl.so
    ln -sf "$nccl/lib/libnccl.so.2" /tmp/ncclh/lib/libnccl.so.2
    cd .gpucheck/anchors/nccl-tests && make -j8 MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/ncclh \
        NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build > /tmp/nccltests-build.log 2>&1 \
        || tail -20 /tmp/nccltests-build.log
) &
build=$!

nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
g=$(nvidia-smi -L | wc -l)
names=$(seq -s, -f 'n%g' 1 "$g")
export PATH=/tmp/between-bin:$PATH FAKE_SLURM_NODES=$names FAKE_SLURM_GPUS_PER_NODE=1
export SLURM_JOB_ID=4242 SLURM_NNODES=$g SLURM_JOB_NODELIST="n[1-$g]"
fleet() {  # fleet NAME [env …]
    local name=$1; shift
    local t0; t0=$(date +%s)
    env "$@" "$bin" fleet run --slurm --quick --between --between-sizes 64M,1G \
        --out "$out/$name" > "$out/$name.txt" 2>&1
    echo "fleet run $name: exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/$name.txt"
    cat "$out/$name.txt"
}
perf=.gpucheck/anchors/nccl-tests/build/all_reduce_perf
for r in $runs; do
    case $r in
        a) fleet a ;;
        b) fleet b NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 ;;
        c) [ "$g" -ge 3 ] || continue
           python3 scripts/soak_matmul.py 900 --gpu 2 --label hog > "$out/hog.txt" 2>&1 &
           hog=$!
           sleep 5
           fleet c
           wait "$build"
           [ -x "$perf" ] && CUDA_VISIBLE_DEVICES=1,2 "$perf" -b 1G -e 1G -g 2 -n 20 -w 5 | tee "$out/nccl-tests-c-gpus12.txt"
           kill "$hog" 2>/dev/null ;;
    esac
done
for r in a b c; do
    [ -d "$out/$r/between" ] || continue
    python3 - "$out/$r" <<'PY'
import json, glob, os, sys
d = sys.argv[1]
for f in sorted(glob.glob(os.path.join(d, "between", "*.json"))):
    r = json.load(open(f))
    print(os.path.basename(d), r["name"], ",".join(r["nodes"]), r["status"], r.get("busbw_gbps"), r.get("transport"), r.get("reason") or "")
PY
done
wait "$build"
if [ -x "$perf" ]; then
    case " $runs " in *" a "*)
        CUDA_VISIBLE_DEVICES=0,1 "$perf" -b 64M -e 1G -f 16 -g 2 -n 20 -w 5 | tee "$out/nccl-tests-a.txt" ;;
    esac
    case " $runs " in *" b "*)
        CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
            "$perf" -b 64M -e 1G -f 16 -g 2 -n 20 -w 5 > "$out/nccl-tests-b.txt" 2>&1
        grep -E "via|Using network|^ +[0-9]+ " "$out/nccl-tests-b.txt" | sort | uniq -c | sort -rn | head -12 ;;
    esac
fi
tar czf "$out/fleets.tgz" -C "$out" $(for r in $runs; do [ -d "$out/$r" ] && echo "$r"; done)
