#!/usr/bin/env bash
# nvbandwidth and nccl-tests beside scalescope on one device call (issue Y):
#   1. builds NVIDIA's tools from their sources with ANCHORS/build-anchors.sh (a script of the
#      machine's owner, not in this repository: it builds nvbandwidth v0.8 and nccl-tests 2.19.6);
#   2. keeps their real outputs for tests/data/reference-tools/: nvbandwidth's text (every test)
#      and -j JSON, nccl-tests' text and -J JSON for six collectives;
#   3. runs ROUNDS interleaved rounds of nvbandwidth's h2d, SM read and D2D latency tests, each
#      followed by scalescope's same tests in every VARIANT (extra `bench bandwidth` flags or
#      `env:NAME=VALUE`), so both tools meet the same minutes of the host.
# Everything is packed into OUT/results.tar.xz again after each step (a device call returns at
# most 8 files; a call cut short still returns what ran).
# Usage: scripts/parity-check.sh OUT BIN ANCHORS [ROUNDS] [VARIANT]…   (SKIP_REFERENCE=1: step 2
# left out)
set -uo pipefail
cd "$(dirname "$0")/.."
dest=${1:?OUT}; bin=${2:?BIN}; anchors=$(cd "${3:?ANCHORS}" && pwd); rounds=${4:-2}
shift 4 2>/dev/null || shift $#
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=("")
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
mkdir -p "$dest" "$out/reference-tools" "$out/parity"
log() {
    tar cJf "$dest/results.tar.xz" -C "$out" .
    echo "[$(date +%T)] $*" | tee -a "$out/log.txt"
}

log "build"
bash "$anchors/build-anchors.sh" > "$out/build.txt" 2>&1
nvbw=/tmp/nvbw/nvbandwidth
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])')/lib
export LD_LIBRARY_PATH=$nccl_lib:/tmp/boost/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi topo -m > "$out/topo.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv > "$out/gpus.csv" 2>&1

parity_round() {
    local r=$1
    log "round $r: nvbandwidth"
    timeout 120 "$nvbw" -t host_to_device_memcpy_ce device_to_device_memcpy_read_sm \
        device_to_device_latency_sm > "$out/parity/nvbw-$r.txt" 2>&1
    local i=0
    for v in "${variants[@]}"; do
        i=$((i + 1))
        local envs=() flags=()
        for w in $v; do
            case $w in env:*) envs+=("${w#env:}") ;; *) flags+=("$w") ;; esac
        done
        log "round $r: scalescope variant $i: ${v:-defaults}"
        echo "$v" > "$out/parity/ours-$r-$i.variant"
        env "${envs[@]}" timeout 150 "$bin" bench bandwidth --gpus 0,1 \
            --tests h2d,p2p_read_sm,latency_d2d "${flags[@]}" \
            --json "$out/parity/ours-$r-$i.json" > "$out/parity/ours-$r-$i.txt" 2>&1
        echo "exit $?" >> "$out/parity/ours-$r-$i.txt"
    done
}

parity_round 1

if [ -z "${SKIP_REFERENCE:-}" ]; then
log "nvbandwidth: every test (text)"
timeout 200 "$nvbw" > "$out/reference-tools/nvbandwidth-all.txt" 2>&1
log "nvbandwidth: -j"
timeout 60 "$nvbw" -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
    device_to_device_memcpy_read_ce device_to_device_memcpy_write_sm \
    device_to_device_bidirectional_memcpy_read_ce device_to_device_latency_sm \
    > "$out/reference-tools/nvbandwidth.json" 2> "$out/reference-tools/nvbandwidth-json.err"

for op in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    log "nccl-tests $op"
    timeout 90 "$anchors/nccl-tests/build/${op}_perf" -b 8 -e 256M -f 4 -g 2 -n 20 -w 5 \
        -J "$out/reference-tools/nccl-tests-$op.json" \
        > "$out/reference-tools/nccl-tests-$op.txt" 2>&1
done
fi

for r in $(seq 2 "$rounds"); do parity_round "$r"; done
log "done"
