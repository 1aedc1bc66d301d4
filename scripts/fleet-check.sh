#!/usr/bin/env bash
# `scalescope fleet run` and `fleet report` on a GPU machine (docs/VERIFIED.md, "Fleet"): a fleet
# of one — this machine reached through an ssh stand-in (a script that runs the command here, as
# for `--remote` in the agent checks) — checked live, then the per-node report through
# `fleet report`; and a fleet of three from the same node's report copied under three names with
# one copy's GPU 0 host→GPU figures lowered by 20 %, which the report must name. With `bench` as
# the second argument instead: the VBIOS the node's report holds beside nvidia-smi's, and a fleet
# of one whose node runs the suite (`fleet run --bench`).
# Usage: scripts/fleet-check.sh OUTDIR [bench]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1
mkdir -p "$out"
bin=/tmp/fleet-bin/scalescope
mkdir -p /tmp/fleet-bin
[ -x "$bin" ] || { xz -dc .gpucheck/scalescope.xz > "$bin" && chmod +x "$bin"; }
cat > /tmp/fleet-bin/fakessh <<'SH'
#!/bin/sh
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift 2
exec sh -c "$*"
SH
chmod +x /tmp/fleet-bin/fakessh
nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
if [ "${2:-}" = bench ]; then
    nvidia-smi --query-gpu=index,vbios_version --format=csv | tee "$out/nvidia-smi-vbios.csv"
    "$bin" fleet run --hosts gpu-node --ssh /tmp/fleet-bin/fakessh --remote-command "$bin agent" \
        --bench --out "$out/bench" > "$out/bench.txt" 2>&1
    echo "fleet run --bench exit $?" | tee -a "$out/bench.txt"
    cat "$out/bench.txt"
    python3 - "$out/bench/nodes/gpu-node/report.json" "$out/bench/report/fleet.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("sections:", [k for k in ("health", "bandwidth", "collectives") if r.get(k)])
inv = (r.get("health") or {}).get("before") or {}
print("vbios in the report:", [(g["index"], g.get("vbios")) for g in inv.get("gpus", [])])
f = json.load(open(sys.argv[2]))
print("fleet fields:", [(x["field"], x["gpu"], x["majority"]) for x in f["fields"] if x["field"] == "vbios"])
print("fleet figures compared:", len(f["figures"]), "verdict", f["verdict"])
PY
    exit 0
fi
"$bin" fleet run --hosts gpu-node --ssh /tmp/fleet-bin/fakessh --remote-command "$bin agent" \
    --quick --out "$out/fleet" > "$out/run.txt" 2>&1
echo "fleet run exit $?" | tee -a "$out/run.txt"
cat "$out/run.txt"
ls -R "$out/fleet" | head -30
cat "$out/fleet/nodes/gpu-node/node.json"; echo
# Three nodes from the one real report: the same figures, and one with GPU 0's h2d lowered.
python3 - "$out" <<'PY'
import json, os, shutil, sys
out = sys.argv[1]
src = os.path.join(out, "fleet", "nodes", "gpu-node", "report.json")
for name, scale in [("node-a", 1.0), ("node-b", 1.0), ("node-c", 0.8)]:
    d = os.path.join(out, "three", name)
    os.makedirs(d, exist_ok=True)
    r = json.load(open(src))
    r["machine"]["hostname"] = name
    changed = 0
    def walk(o):
        global changed
        if isinstance(o, dict):
            if o.get("test") == "h2d" and str(o.get("dst")) == "0" and "median_gbps" in o:
                for k in ("median_gbps", "min_gbps", "max_gbps"):
                    if isinstance(o.get(k), (int, float)):
                        o[k] *= scale
                o["sample_values"] = [v * scale for v in o.get("sample_values") or []]
                changed += 1
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(r)
    json.dump(r, open(os.path.join(d, "report.json"), "w"))
    print(name, "h2d figures scaled:", changed if scale != 1.0 else 0)
PY
"$bin" fleet report "$out/three" --out "$out/three-report" > "$out/three.txt" 2>&1
echo "fleet report exit $?" | tee -a "$out/three.txt"
cat "$out/three.txt"
