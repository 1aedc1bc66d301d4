#!/usr/bin/env bash
# `scalescope watch` on a GPU machine (docs/VERIFIED.md, "Live traffic"). Stage 1 (one GPU):
# watch records while scripts/watch_copy.py copies host->GPU, GPU->host and both at rates it
# times itself; watch_compare.py puts the two side by side; /metrics is fetched while copying;
# the agent streams through an ssh stand-in; the sampler's cost to a running copy is measured
# in alternating blocks. Stage 2 (two GPUs): the same with GPU->GPU copies over NVLink.
# Usage: scripts/watch-check.sh 1|2 OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
stage=$1 out=$2
mkdir -p "$out"
bin=/tmp/watch-bin/scalescope
mkdir -p /tmp/watch-bin
[ -x "$bin" ] || { xz -dc .gpucheck/scalescope.xz > "$bin" && chmod +x "$bin"; }
nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
# An ssh stand-in: drops ssh's options and the host, runs the command here.
cat > /tmp/watch-bin/fakessh <<'SH'
#!/bin/sh
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift 2
exec sh -c "$*"
SH
chmod +x /tmp/watch-bin/fakessh
metrics() {
    python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$1/metrics').read().decode())"
}
if [ "$stage" = 1 ]; then
    phases=idle:4,h2d:12,d2h:12,both:12,idle:3
    name=watch-h100-pcie
else
    phases=idle:3,p2p01:10,p2p10:10,p2pboth:10,h2d:8,d2h:8,idle:2
    name=watch-h100x2-nvlink
fi
"$bin" watch --interval 1s --record "$out/$name.jsonl" --csv "$out/$name.csv" > "$out/watch.txt" 2>&1 &
w=$!
sleep 2
python3 scripts/watch_copy.py "$phases" > "$out/copies.jsonl" 2> "$out/copies.err"
sleep 1.5
kill -INT $w; wait $w; echo "watch exit $?" | tee -a "$out/watch.txt"
head -5 "$out/watch.txt"; grep -m3 pair "$out/watch.txt"
python3 scripts/watch_compare.py "$out/$name.jsonl" "$out/copies.jsonl" "$out/$name.csv" | tee "$out/compare.txt"
# /metrics while copying.
"$bin" watch --prometheus 127.0.0.1:9400 --quiet > "$out/prom.txt" 2>&1 &
p=$!
python3 scripts/watch_copy.py h2d:12 > "$out/prom-copies.jsonl" 2>&1 &
c=$!
# Once the copies run (PyTorch takes a few seconds to start), two seconds in.
until grep -q '"bytes"' "$out/prom-copies.jsonl" 2>/dev/null; do sleep 0.5; done
sleep 2
metrics 9400 > "$out/metrics-live.txt"
wait $c; kill -INT $p; wait $p; echo "prometheus watch exit $?" >> "$out/prom.txt"
grep -E "^scalescope_(pcie|nvlink)_bytes" "$out/metrics-live.txt" | head -8
# The agent's stream through the ssh stand-in.
"$bin" watch --remote localhost --ssh /tmp/watch-bin/fakessh --remote-command "$bin agent" --count 3 > "$out/remote.txt" 2>&1
echo "remote exit $?" | tee -a "$out/remote.txt"; tail -4 "$out/remote.txt"
# A fast interval, and bad input on a real machine.
"$bin" watch --interval 100ms --count 5 > "$out/fast.txt" 2>&1; echo "fast exit $?" >> "$out/fast.txt"
"$bin" watch --gpus 7 --count 1 > "$out/badgpu.txt" 2>&1; echo "badgpu exit $?" >> "$out/badgpu.txt"
cat "$out/badgpu.txt"
# What the sampler costs a running copy.
if [ "$stage" = 1 ]; then
    python3 scripts/watch_copy.py --overhead "$bin" > "$out/overhead.jsonl" 2> "$out/overhead.err"
    python3 scripts/watch_compare.py "$out/$name.jsonl" "$out/copies.jsonl" "$out/$name.csv" "$out/overhead.jsonl" | tail -2 | tee -a "$out/compare.txt"
fi
