#!/usr/bin/env bash
# The GPU checks, run on a machine with NVIDIA GPUs (CI has none). Compares `scalescope topo`
# with nvidia-smi cell for cell, runs `scalescope check` (healthy, then with a second process
# hammering GPU 0 -> GPU 1), the `#[ignore = "needs GPU"]` tests, and the benchmarks recorded in
# docs/BENCHMARKS.md. Writes everything to OUTDIR (default $OUT or ./gpu-check-out).
#
# Binaries: .gpucheck/ from scripts/build-gpu-check.sh (for machines without Rust), else
# target/release/scalescope and `cargo test --ignored`.
# Usage: scripts/gpu-check.sh [OUTDIR] [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check-out}}
quick=${2:-}
mkdir -p "$out"
# NVLink multicast must stay off on shared hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# nccl-tests' reference figures were measured with PyTorch's NCCL; compare like with like when
# that copy exists (scalescope's own search order is exercised by the other runs).
torch_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
nccl_flag=()
[ -n "$torch_nccl" ] && [ -f "$torch_nccl" ] && nccl_flag=(--nccl-lib "$torch_nccl")
bin=.gpucheck/scalescope
[ -x "$bin" ] || bin=target/release/scalescope
status=0
step() { echo; echo "=== $*"; }

step "nvidia-smi facts"
nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
nvidia-smi topo -m > "$out/nvidia-smi-topo-m.txt"
cat "$out/nvidia-smi-topo-m.txt"
for c in r w n a; do
    { echo "\$ nvidia-smi topo -p2p $c"; nvidia-smi topo -p2p "$c"; } >> "$out/nvidia-smi-topo-p2p.txt"
done
cat "$out/nvidia-smi-topo-p2p.txt"
nvidia-smi nvlink -s > "$out/nvidia-smi-nvlink-s.txt" 2>&1; head -20 "$out/nvidia-smi-nvlink-s.txt"
nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv | tee "$out/nvidia-smi-query.csv"

step "scalescope topo"
"$bin" topo | tee "$out/scalescope-topo.txt" || status=1
"$bin" topo --format csv > "$out/scalescope-links.csv" || status=1
"$bin" topo --format csv --table gpus > "$out/scalescope-gpus.csv" || status=1
"$bin" topo --format json > "$out/scalescope-topo.json" || status=1

step "cell for cell: live topology vs nvidia-smi (imported with scalescope's own parser)"
"$bin" topo --import "$out/nvidia-smi-topo-m.txt" --import "$out/nvidia-smi-topo-p2p.txt" --format csv \
    > "$out/nvidia-smi-links.csv" || status=1
# Columns 1-4 (gpu_a, gpu_b, link, nvlinks) and 6-9 (P2P read/write/nvlink/atomics).
if diff <(cut -d, -f1-4,6-9 "$out/scalescope-links.csv") <(cut -d, -f1-4,6-9 "$out/nvidia-smi-links.csv"); then
    echo "topology: scalescope and nvidia-smi agree on every link and P2P cell"
else
    echo "topology: MISMATCH (diff above)"; status=1
fi

# The health check first, on idle GPUs: it must pass on a healthy machine (exit 0).
step "scalescope check (healthy machine: exit 0 expected) and the NVML readings behind it"
nvidia-smi -q -x > "$out/check-before-smi-q.xml" 2>&1
nvidia-smi nvlink -e > "$out/check-before-nvlink-e.txt" 2>&1
"$bin" check --json "$out/check.json" --csv "$out/check.csv" > "$out/check.txt" 2>&1
code=$?
cat "$out/check.txt"; echo "scalescope check: exit $code (expected 0)" | tee -a "$out/check.txt"
[ "$code" = 0 ] || status=1
nvidia-smi nvlink -e > "$out/check-after-nvlink-e.txt" 2>&1
nvidia-smi -q -d PERFORMANCE,ECC,PAGE_RETIREMENT,ROW_REMAPPER > "$out/check-after-smi-q-d.txt" 2>&1
"$bin" check --quick --json "$out/check-quick.json" > "$out/check-quick.txt" 2>&1
echo "scalescope check --quick: exit $? ($(tail -1 "$out/check-quick.txt"))"
# The same captures, checked as a vendor's would be (inventory only, performance modeled).
"$bin" check --import "$out/check-before-smi-q.xml" --import "$out/nvidia-smi-topo-m.txt" \
    --import "$out/nvidia-smi-nvlink-s.txt" --import "$out/check-before-nvlink-e.txt" \
    --import "$out/check-after-nvlink-e.txt" > "$out/check-import.txt" 2>&1
echo "scalescope check --import (this machine's captures): exit $? ($(tail -1 "$out/check-import.txt"))"

step "scalescope check while a second process hammers GPU 0 -> GPU 1 copies (FAIL/WARN with contention expected)"
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
    scripts/hammer-p2p.sh 150 0 1 > "$out/hammer.txt" 2>&1 &
    hammer=$!
    for _ in $(seq 1 120); do grep -q "hammer: ready" "$out/hammer.txt" && break; sleep 0.5; done
    cat "$out/hammer.txt"
    nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id --format=csv > "$out/hammer-apps.csv" 2>&1
    "$bin" check --json "$out/check-contention.json" --csv "$out/check-contention.csv" > "$out/check-contention.txt" 2>&1
    code=$?
    kill "$hammer" 2>/dev/null; wait "$hammer" 2>/dev/null
    cat "$out/check-contention.txt" "$out/hammer.txt"
    echo "scalescope check under contention: exit $code (3 expected: links 0->1 below expected, contention named)" | tee -a "$out/check-contention.txt"
    grep -q "contention" "$out/check-contention.txt" || { echo "contention NOT named"; status=1; }
fi

# Bandwidth next, on GPUs that have been idle (the GPU tests below load them hard).
step "bench bandwidth (every test, 512 MiB)"
"$bin" bench bandwidth --csv "$out/bandwidth.csv" --json "$out/bandwidth.json" 2>&1 | tee "$out/bandwidth.txt" || status=1

step "GPU tests (#[ignore = \"needs GPU\"])"
if [ -d .gpucheck/tests ]; then
    for t in .gpucheck/tests/*; do
        "$t" --ignored --test-threads=1 2>&1 | tee -a "$out/gpu-tests.txt" || status=1
    done
else
    cargo test --release -- --ignored --test-threads=1 2>&1 | tee "$out/gpu-tests.txt" || status=1
fi


step "bench collectives: NCCL, every op, nccl-tests' sizes (f32 sum, out of place, 20 iterations)"
"$bin" bench collectives "${nccl_flag[@]}" --ops all --sizes 8,8M,128M,2G,8G --iters 20 \
    --csv "$out/collectives-nccl.csv" --json "$out/collectives-nccl.json" 2>&1 | tee "$out/collectives-nccl.txt" || status=1

step "bench collectives: NCCL all-reduce small sizes with and without a CUDA graph"
"$bin" bench collectives "${nccl_flag[@]}" --sizes 8..64K --iters 100 --csv "$out/collectives-small.csv" > "$out/collectives-small.txt" 2>&1 || status=1
"$bin" bench collectives "${nccl_flag[@]}" --sizes 8..64K --iters 100 --graph --csv "$out/collectives-small-graph.csv" > "$out/collectives-small-graph.txt" 2>&1 || status=1
grep -E "^ +(8|1024|65536) " "$out/collectives-small.txt" "$out/collectives-small-graph.txt"

step "bench collectives: own ring / tree / via-host all-reduce beside NCCL"
"$bin" bench collectives "${nccl_flag[@]}" --algo nccl,ring,tree,host --sizes 1M,64M,256M,1G,4G \
    --csv "$out/collectives-own.csv" 2>&1 | tee "$out/collectives-own.txt" || status=1

step "bench collectives: two processes, one GPU each, environment as torchrun sets it"
pids=""
for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 \
        "$bin" bench collectives "${nccl_flag[@]}" --sizes 128M,1G,4G --iters 20 --csv "$out/collectives-2proc-rank$r.csv" \
        > "$out/collectives-2proc-rank$r.txt" 2>&1 &
    pids="$pids $!"
done
for p in $pids; do wait "$p" || status=1; done
cat "$out/collectives-2proc-rank0.txt"

step "bench collectives: one process, same sizes, for the two-process comparison"
"$bin" bench collectives "${nccl_flag[@]}" --sizes 128M,1G,4G --iters 20 2>&1 | tee "$out/collectives-1proc.txt" || status=1

step "bench scaling: measured weak and strong scaling 1 -> N GPUs against the model"
"$bin" bench scaling --measure "${nccl_flag[@]}" --workload resnet50 --workload gpt2-xl --max-gpus 16 \
    --csv "$out/scaling.csv" --json "$out/scaling.json" 2>&1 | tee "$out/scaling.txt" || status=1

step "scalescope --bench --quick and --full: wall time and every file written"
for preset in quick full; do
    rm -rf "$out/suite-$preset"
    t0=$(date +%s%N)
    "$bin" --bench --$preset "${nccl_flag[@]}" --out "$out/suite-$preset" > "$out/suite-$preset.txt" 2>&1 || status=1
    t1=$(date +%s%N)
    echo "--bench --$preset: $(( (t1 - t0) / 1000000 )) ms wall" | tee -a "$out/suite-times.txt"
    cat "$out/suite-$preset.txt"
    ls -la "$out/suite-$preset" | tee -a "$out/suite-times.txt"
done

if [ "$quick" != "--quick" ]; then
    step "bench bandwidth sweep (P2P and host copies, 4 KiB … 1 GiB)"
    "$bin" bench bandwidth --tests h2d,d2h,p2p_read_ce,p2p_write_sm --sizes 4K..1G \
        --csv "$out/bandwidth-sweep.csv" > "$out/bandwidth-sweep.txt" 2>&1 || status=1

    step "SM copy tuning sweep (docs/BENCHMARKS.md, issue B)"
    scripts/sm-copy-tuning.sh "$out/sm-copy-tuning" || status=1

    step "collectives on GPU subsets: NCCL beside the own ring and tree"
    gpus=$(nvidia-smi -L | wc -l)
    subsets="0,1"
    [ "$gpus" -ge 4 ] && subsets="$subsets 1,3 0,1,2 0,1,2,3"
    [ "$gpus" -ge 8 ] && subsets="$subsets 0,2,4,6 0,1,2,3,4,5,6,7"
    for g in $subsets; do
        "$bin" bench collectives "${nccl_flag[@]}" --gpus "$g" --algo nccl,ring,tree --sizes 1M,64M,1G \
            --csv "$out/collectives-subset-$g.csv" > "$out/collectives-subset-$g.txt" 2>&1 || status=1
    done
fi

echo
echo "gpu-check: exit $status"
exit $status
