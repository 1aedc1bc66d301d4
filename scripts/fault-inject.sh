#!/usr/bin/env bash
# Fault injection on a 1- or 2-GPU machine: does `scalescope check` see a competing job, and does it
# name the right cause? Faults are second processes from scripts/fault_hogs.py (compute, memory,
# copy, cpu, hostmem); their start/end lines are the ground truth, scored by scripts/fault_compare.py.
# GPUS: the GPUs used (default 0,1 where nvidia-smi lists two or more, else 0).
# Part A: `check --quick --soak $SOAK --gpus $GPUS` (SOAK=4m) with 4 faults injected at seeded
# random times (kinds shuffled, a GPU of GPUS for the GPU kinds, 15-30 s each, the first >= 40 s
# into the soak's load, >= 20 s clean between them, never overlapping: one hog at a time).
# Part B: `check --quick --gpus $GPUS` with one fault running for the whole check (started 3 s
# before, killed after): compute on the last GPU, memory on the first, copy on the last, cpu,
# hostmem (the host's memory bus: a kind the causes were not written for), vram on the first (an
# idle process holding all but 1 GiB of its memory: another such kind); then a clean run (skipped first if time runs short: the checks before the soak are a clean
# run too).
# Only processes are added: clocks, power limits, persistence, MIG, compute mode are never
# touched (no nvidia-smi -pl/-lgc/-ac/-pm/-mig/-c/-r): a lowered power limit and locked clocks
# are exercised only by recorded/edited series on CI (check --soak-replay).
# Writes OUTDIR/soak/{health.json,soak.csv,faults.jsonl,check.txt,hog-N.*},
# OUTDIR/check-K/{health.json,fault.json,check.txt,hog.*}, OUTDIR/compare.md. Under 9 minutes
# with SOAK=4m (BUDGET_S=520 stops starting Part B runs that would not fit).
# PHASED=1 puts each fault inside the soak phase it competes with (compute in GEMM, memory in
# memory, copy in PCIe, cpu in NCCL), at a random time within it; on one GPU (no NCCL phase)
# the cpu fault goes in the GEMM phase's second half, after the compute fault.
# Usage: scripts/fault-inject.sh OUTDIR BIN [SEED]     (env: SOAK=4m BUDGET_S=520 PHASED=0 GPUS= PYTHON=python3)
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,21p' "$0"; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd) seed=${3:-1}
[ -x "$2" ] && [ -f "$2" ] || { echo "no executable scalescope at $2" >&2; exit 2; }
bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
cd "$(dirname "$0")/.."
soak=${SOAK:-4m}
budget=${BUDGET_S:-520}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_ORDER=PCI_BUS_ID
py=${PYTHON:-python3}
if ! "$py" -c 'import torch' 2>/dev/null && [ -x /opt/torch/.venv/bin/python3 ]; then
    py=/opt/torch/.venv/bin/python3
fi
begin=$(date +%s.%3N)
now() { date +%s.%3N; }
elapsed() { "$py" -c 'import sys, time; print(int(time.time() - float(sys.argv[1])))' "$begin"; }
sleep_until() {  # in the background, so that the trap below runs at once
    "$py" -c 'import sys, time; time.sleep(max(0.0, float(sys.argv[1]) - time.time()))' "$1" &
    sleeper=$!
    wait $sleeper
}
add() { "$py" -c 'import sys; print(f"{float(sys.argv[1]) + float(sys.argv[2]):.3f}")' "$1" "$2"; }
check="" hog="" sleeper=""
# Stopped early: stop the check and the hog running, not just this script.
trap 'kill -TERM $check $hog $sleeper 2>/dev/null; exit 130' INT TERM
rm -rf "$out/soak" "$out"/check-[0-9]* "$out/compare.md"
mkdir -p "$out/soak"
{ nvidia-smi -L; nvidia-smi --query-gpu=index,pci.bus_id,name,power.limit,clocks.max.sm --format=csv; } > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"
if [ -z "${GPUS:-}" ]; then
    if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')" -ge 2 ]; then GPUS=0,1; else GPUS=0; fi
fi
first_gpu=${GPUS%%,*} last_gpu=${GPUS##*,}
export GPUS

# ---- Part A: the soak, with faults at seeded random times ---------------------------------
faults=$out/soak/faults.jsonl
: > "$faults"
# Schedule: "KIND GPU START DURATION" (START: seconds after the soak's load began).
schedule=$("$py" - "$seed" "$soak" <<'PY'
import os, random, re, sys
seed, spec = int(sys.argv[1]), sys.argv[2]
gpus = [int(g) for g in os.environ["GPUS"].split(",")]
parts = re.findall(r"(\d+(?:\.\d+)?)([smh]?)", spec)
total = sum(float(v) * {"": 1, "s": 1, "m": 60, "h": 3600}[u] for v, u in parts)
r = random.Random(seed)
if os.environ.get("PHASED") == "1":
    # Each fault inside the phase it competes with, at a random time in it: compute in the GEMM
    # phase, memory in the memory phase, copy in the PCIe phase, cpu in the NCCL phase (phases
    # as job/soak.rs's phase_at lays them out: GEMM 3 shares of each cycle of min(D, 300 s),
    # each other load 1; 2 GPUs run all five loads).
    # one GPU runs GEMM, memory and PCIe only (5 shares): the cpu fault goes in the GEMM
    # phase's second half, the compute fault in its first.
    cycle = min(total, 300.0)
    if len(gpus) > 1:
        share = cycle / 7
        where = {"compute": (40, 3 * share), "memory": (3 * share, 4 * share),
                 "copy": (4 * share, 5 * share), "cpu": (6 * share, 7 * share)}
    else:
        share = cycle / 5
        where = {"compute": (40, 1.5 * share + 20), "cpu": (1.5 * share + 20, 3 * share),
                 "memory": (3 * share, 4 * share), "copy": (4 * share, 5 * share)}
    order = ["compute", "memory", "copy", "cpu"] if len(gpus) > 1 else ["compute", "cpu", "memory", "copy"]
    for k in order:
        lo, hi = where[k]
        dur = r.randint(15, 22)
        if lo + 8 > hi - dur - 3:  # the phase cannot hold the fault: it would run into the next
            sys.exit(f"soak {spec} is too short for phased faults ({k}: {hi - lo:.0f} s phase)")
        start = r.uniform(lo + 8, hi - dur - 3)
        gpu = "-" if k == "cpu" else r.choice(gpus)
        print(k, gpu, int(start), dur)
    sys.exit(0)
kinds = ["compute", "memory", "copy", "cpu"]
r.shuffle(kinds)
durs = [r.randint(15, 30) for _ in kinds]
first, gap, tail = 40, 20, 10  # tail: the last fault ends this long before the soak does
slack = int(total) - tail - first - sum(durs) - gap * (len(kinds) - 1)
if slack < 0:
    sys.exit(f"soak {spec} is too short for 4 faults (needs {int(total) - slack} s)")
cuts = sorted(r.randint(0, slack) for _ in kinds)  # extra time before each fault, cumulative
for i, k in enumerate(kinds):
    gpu = "-" if k == "cpu" else r.choice(gpus)
    print(k, gpu, first + cuts[i] + sum(durs[:i]) + gap * i, durs[i])
PY
) || exit 2
echo "fault schedule (seed $seed; kind gpu start_s seconds):"; echo "$schedule"
soak_s=$("$py" -c 'import re,sys; print(int(sum(float(v)*{"":1,"s":1,"m":60,"h":3600}[u] for v,u in re.findall(r"(\d+(?:\.\d+)?)([smh]?)", sys.argv[1]))))' "$soak")
launch=$(now)
timeout $((soak_s + 300)) "$bin" check --quick --soak "$soak" --gpus "$GPUS" \
    --json "$out/soak/health.json" --soak-csv "$out/soak/soak.csv" > "$out/soak/check.txt" 2>&1 &
check=$!
echo "{\"event\":\"soak_launch\",\"t_unix\":$launch,\"timeout_pid\":$check,\"soak\":\"$soak\",\"seed\":$seed}" >> "$faults"
# The soak's load began time_s before the first row of soak.csv was written (the pre-soak checks
# come first). An estimate for scheduling; fault_compare.py uses health.json's soak.started_at.
t0=$("$py" - "$out/soak/soak.csv" "$check" <<'PY'
import os, re, sys, time
path, pid = sys.argv[1], int(sys.argv[2])
for _ in range(int(400 / 0.1)):
    try:
        lines = open(path).read().split("\n")
        m = re.match(r"(\d+(?:\.\d+)?),\d", lines[1]) if len(lines) > 1 else None
        if m:
            print(f"{time.time() - float(m.group(1)):.3f}")
            sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("the check ended before its soak began")
    time.sleep(0.1)
sys.exit("no soak.csv row after 400 s")
PY
)
if [ -z "$t0" ]; then
    echo "the soak did not start: see $out/soak/check.txt"; tail -20 "$out/soak/check.txt"
else
    echo "{\"event\":\"soak_t0_estimate\",\"t_unix\":$t0}" >> "$faults"
    echo "soak load began at ~$t0 ($(elapsed) s into this script)"
    lead=12  # a hog is launched this long before its start (torch import, CUDA, buffers)
    i=0
    while read -r kind gpu start dur <&3; do
        i=$((i + 1))
        at=$(add "$t0" "$start")
        echo "{\"event\":\"planned\",\"n\":$i,\"kind\":\"$kind\",\"gpu\":$([ "$gpu" = - ] && echo null || echo "$gpu"),\"start_s\":$start,\"seconds\":$dur,\"at_unix\":$at}" >> "$faults"
        sleep_until "$(add "$at" "-$lead")"
        kill -0 "$check" 2>/dev/null || { echo "{\"event\":\"skipped\",\"n\":$i,\"why\":\"the soak had ended\"}" >> "$faults"; break; }
        args=("$kind" --seconds "$dur" --at "$at")
        [ "$gpu" = - ] || args+=(--gpu "$gpu")
        echo "fault $i: $kind$([ "$gpu" = - ] || echo " on GPU $gpu") at soak ${start} s for $dur s"
        timeout $((lead + dur + 60)) "$py" scripts/fault_hogs.py "${args[@]}" < /dev/null \
            > "$out/soak/hog-$i.jsonl" 2> "$out/soak/hog-$i.err" &
        hog=$!
        wait "$hog"
        rc=$?
        hog=""
        cat "$out/soak/hog-$i.jsonl" >> "$faults"
        [ $rc = 0 ] || { echo "{\"event\":\"hog_failed\",\"n\":$i,\"exit\":$rc}" >> "$faults"; tail -5 "$out/soak/hog-$i.err"; }
    done 3<<< "$schedule"
fi
wait "$check"
soak_rc=$?
echo "{\"event\":\"soak_exit\",\"t_unix\":$(now),\"exit\":$soak_rc}" >> "$faults"
echo "soak check: exit $soak_rc ($(elapsed) s into this script)"
grep -E "soak_|verdict" "$out/soak/check.txt"

# ---- Part B: plain checks, each with one fault running throughout ---------------------------
k=0
last=60
for spec in "compute $last_gpu" "memory $first_gpu" "copy $last_gpu" "cpu -" "hostmem -" "vram $first_gpu" "clean -"; do
    read -r kind gpu <<< "$spec"
    k=$((k + 1))
    d=$out/check-$k
    mkdir -p "$d"
    if [ $(( $(elapsed) + last + 15 )) -gt "$budget" ]; then
        echo "check-$k ($kind): skipped, $(elapsed) s used of $budget"
        echo "{\"kind\":\"$kind\",\"gpu\":$([ "$gpu" = - ] && echo null || echo "$gpu"),\"skipped\":\"time budget: $(elapsed) s used of $budget\"}" > "$d/fault.json"
        continue
    fi
    hog=""
    if [ "$kind" != clean ]; then
        args=("$kind" --seconds 300)
        [ "$gpu" = - ] || args+=(--gpu "$gpu")
        "$py" scripts/fault_hogs.py "${args[@]}" > "$d/hog.jsonl" 2> "$d/hog.err" &
        hog=$!
        for _ in $(seq 1 600); do
            grep -q '"event":"start"' "$d/hog.jsonl" 2>/dev/null && break
            kill -0 "$hog" 2>/dev/null || break
            sleep 0.1
        done
        sleep 3
        nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_memory --format=csv > "$d/apps.csv" 2>&1
    fi
    c0=$(now)
    timeout 240 "$bin" check --quick --gpus "$GPUS" --json "$d/health.json" > "$d/check.txt" 2>&1 &
    check=$!
    wait "$check"
    rc=$?
    check=""
    c1=$(now)
    if [ -n "$hog" ]; then
        kill -TERM "$hog" 2>/dev/null
        wait "$hog"
        hog=""
    fi
    last=$("$py" -c 'import sys; print(int(float(sys.argv[2]) - float(sys.argv[1])) + 5)' "$c0" "$c1")
    "$py" - "$d" "$kind" "$gpu" "$c0" "$c1" "$rc" <<'PY'
import json, os, sys
d, kind, gpu, c0, c1, rc = sys.argv[1:]
lines = []
if os.path.exists(f"{d}/hog.jsonl"):
    for line in open(f"{d}/hog.jsonl"):
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass
ev = {x.get("event"): x for x in lines}
json.dump({"kind": kind, "gpu": None if gpu == "-" else int(gpu),
           "pid": ev.get("start", {}).get("pid"), "start": ev.get("start"), "end": ev.get("end"),
           "check_start_unix": float(c0), "check_end_unix": float(c1), "exit": int(rc)},
          open(f"{d}/fault.json", "w"), indent=1)
PY
    echo "check-$k ($kind$([ "$gpu" = - ] || echo " on GPU $gpu")): exit $rc; $(tail -1 "$d/check.txt")"
done

echo "total $(elapsed) s"
"$py" scripts/fault_compare.py "$out" | tee "$out/compare.md"
