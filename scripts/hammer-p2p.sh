#!/usr/bin/env bash
# Keeps GPU SRC → GPU DST copies running from a second process, to check that `scalescope check`
# reports the affected links below expected and names contention (another process on the GPUs).
# Prints "hammer: ready" once copies run, then the rate every few seconds; stops after SECONDS.
#
# Usage: scripts/hammer-p2p.sh [SECONDS] [SRC] [DST]     (default: 120 0 1)
# Needs python3 with PyTorch (PYTHON=… to choose; /opt/torch/.venv/bin/python3 is tried); without
# it, falls back to looping `scalescope bench bandwidth --tests p2p_write_ce` on the pair.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
src=${2:-0}
dst=${3:-1}
py=${PYTHON:-python3}
if ! "$py" -c 'import torch' 2>/dev/null && [ -x /opt/torch/.venv/bin/python3 ]; then
    py=/opt/torch/.venv/bin/python3
fi
if "$py" -c 'import torch; assert torch.cuda.device_count() > 1' 2>/dev/null; then
    exec "$py" - "$secs" "$src" "$dst" <<'PY'
import sys, time, torch
secs, src, dst = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
n = 512 << 20
a = torch.empty(n, dtype=torch.uint8, device=f"cuda:{src}")
b = torch.empty(n, dtype=torch.uint8, device=f"cuda:{dst}")
torch.cuda.set_device(dst)
s = torch.cuda.Stream(device=dst)
end = time.time() + secs
moved, t0, said = 0, time.time(), False
while time.time() < end:
    with torch.cuda.stream(s):
        for _ in range(8):
            b.copy_(a, non_blocking=True)
    s.synchronize()
    moved += 8 * n
    if not said:
        print(f"hammer: ready ({src}->{dst}, torch {torch.__version__}, peer access "
              f"{torch.cuda.can_device_access_peer(dst, src)})", flush=True)
        said = True
    if time.time() - t0 > 5:
        print(f"hammer: {moved / (time.time() - t0) / 1e9:.1f} GB/s {src}->{dst}", flush=True)
        moved, t0 = 0, time.time()
print("hammer: done", flush=True)
PY
fi
bin=.gpucheck/scalescope
[ -x "$bin" ] || bin=target/release/scalescope
echo "hammer: no PyTorch; looping $bin bench bandwidth --tests p2p_write_ce on GPUs $src,$dst"
end=$(( $(date +%s) + ${secs%.*} ))
said=
while [ "$(date +%s)" -lt "$end" ]; do
    [ -z "$said" ] && echo "hammer: ready ($src->$dst and back, scalescope)" && said=1
    "$bin" bench bandwidth --gpus "$src,$dst" --tests p2p_write_ce --sizes 1G --iters 64 --samples 20 >/dev/null 2>&1 || break
done
echo "hammer: done"
