#!/usr/bin/env python3
"""One fault for `scripts/fault-inject.sh`: a second job that competes with `scalescope check`
for one resource, so that the check's findings (and the causes it names) can be compared with
what was really done. Kinds:

  compute  bf16 matmuls 8192^3 in a loop on GPU G: another job's kernels share the SMs (the
           soak's GEMM and the check's copy kernels slow down).
  memory   device-to-device copies between two large buffers (--gib, default 4 GiB) on GPU G:
           another job saturating the GPU's memory bandwidth.
  copy     host<->GPU copies between pinned host memory (--gib, default 1 GiB each way) and GPU G,
           both directions issued alternately on two streams (non_blocking): a PCIe hog.
  cpu      one pure-Python busy loop per host CPU (os.cpu_count() processes): a host too busy to
           keep the GPUs fed. Uses no GPU (--gpu is ignored).
  hostmem  host-memory copies between two large CPU buffers (--gib, default 2 GiB) on half the
           host's CPUs (torch's CPU threads): a job saturating the host's memory bus, which the
           GPUs' DMA shares, without saturating its CPUs. Uses no GPU (--gpu is ignored). Not a
           kind the check's causes were written for.
  vram     holds all but --gib (default 1 GiB) of GPU G's free memory and runs nothing: a job
           left idle (a notebook's kernel, a hung rank) holding the memory the check's tests
           need. Not a kind the check's causes were written for.

The load starts at --at (Unix time; default: as soon as it is set up), runs --seconds by the wall
clock and ends within ~0.5 s (GPU kinds synchronize every ~0.1 s); SIGTERM or SIGINT ends it
early. Prints one JSON line when the load really runs (after the first synchronize; `t_unix` is
when it began), and one at the end, then exits 0:
  {"event":"start","kind":..,"gpu":..,"pid":..,"t_unix":..}
  {"event":"end","kind":..,"gpu":..,"pid":..,"t_unix":..,"seconds":..,"reason":..,"rate":..,"unit":..}
GPU indices are nvidia-smi's (CUDA_DEVICE_ORDER=PCI_BUS_ID).

Usage: fault_hogs.py compute|memory|copy|cpu|hostmem|vram [--gpu G] [--seconds S] [--at UNIX] [--gib N]
"""
import argparse
import json
import os
import signal
import sys
import time

BATCH_S = 0.1  # GPU work between synchronizes (the stop is checked at each)
STOP = False


def on_signal(*_):
    global STOP
    STOP = True


def say(**obj):
    print(json.dumps(obj, separators=(",", ":")), flush=True)


def wait_until(t):
    while not STOP and time.time() < t:
        time.sleep(min(0.1, max(0.0, t - time.time())))


def gpu_hog(a):
    """Sets the load up, then runs batches sized to ~BATCH_S until the deadline. Returns the
    start time, the work done and its unit."""
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    import torch

    torch.cuda.set_device(a.gpu)
    dev = f"cuda:{a.gpu}"
    if a.kind == "compute":
        d = 8192
        x = torch.randn(d, d, device=dev, dtype=torch.bfloat16)
        y = torch.randn(d, d, device=dev, dtype=torch.bfloat16)
        out = torch.empty(d, d, device=dev, dtype=torch.bfloat16)

        def step():
            torch.matmul(x, y, out=out)
        work, unit = 2 * d**3 / 1e12, "TFLOP/s"
    elif a.kind == "memory":
        n = int(a.gib * (1 << 30))
        src = torch.ones(n, dtype=torch.uint8, device=dev)
        dst = torch.empty(n, dtype=torch.uint8, device=dev)

        def step():
            dst.copy_(src)
        work, unit = n / 1e9, "GB/s"  # bytes copied (each read and written)
    else:  # copy
        n = int(a.gib * (1 << 30))
        h_src = torch.ones(n, dtype=torch.uint8, pin_memory=True)
        h_dst = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        d_src = torch.ones(n, dtype=torch.uint8, device=dev)
        d_dst = torch.empty(n, dtype=torch.uint8, device=dev)
        up, down = torch.cuda.Stream(dev), torch.cuda.Stream(dev)

        def step():
            with torch.cuda.stream(up):
                d_dst.copy_(h_src, non_blocking=True)
            with torch.cuda.stream(down):
                h_dst.copy_(d_src, non_blocking=True)
        work, unit = 2 * n / 1e9, "GB/s"  # both directions added
    step()  # libraries loaded, kernels chosen: not the load yet
    torch.cuda.synchronize()
    wait_until(a.at or 0)
    t0 = time.time()
    deadline = t0 + a.seconds
    n, done, said = 1, 0, False
    while not STOP and time.time() < deadline:
        b0 = time.time()
        for _ in range(n):
            step()
        torch.cuda.synchronize()
        dt = max(time.time() - b0, 1e-6)
        done += n
        if not said:
            say(event="start", kind=a.kind, gpu=a.gpu, pid=os.getpid(), t_unix=round(t0, 3))
            said = True
        n = max(1, min(4 * n, int(n * BATCH_S / dt)))
    return t0, done * work, unit, said


def hostmem_hog(a):
    """Copies one host buffer into another on half the CPUs until the deadline. Returns the
    start time, the bytes copied and their unit."""
    import torch

    threads = max(1, (os.cpu_count() or 2) // 2)
    torch.set_num_threads(threads)
    n = int(a.gib * (1 << 30))
    src = torch.ones(n, dtype=torch.uint8)
    dst = torch.empty(n, dtype=torch.uint8)
    dst.copy_(src)  # pages touched: not the load yet
    wait_until(a.at or 0)
    t0 = time.time()
    deadline = t0 + a.seconds
    done = 0
    say(event="start", kind=a.kind, gpu=None, pid=os.getpid(), t_unix=round(t0, 3),
        threads=threads)
    while not STOP and time.time() < deadline:
        dst.copy_(src)
        done += 1
    return t0, done * n / 1e9, "GB/s", True


def vram_hog(a):
    """Allocates GPU memory until --gib is left free, then idles until the deadline. Returns the
    start time, the GiB held and their unit."""
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    import torch

    torch.cuda.set_device(a.gpu)
    dev = f"cuda:{a.gpu}"
    keep = int(a.gib * (1 << 30))
    chunk = 256 << 20
    held = []
    while True:
        free, _ = torch.cuda.mem_get_info(dev)
        want = min(chunk, free - keep)
        if want < (16 << 20):
            break
        try:
            held.append(torch.empty(want, dtype=torch.uint8, device=dev))
        except torch.OutOfMemoryError:
            break
    torch.cuda.synchronize()
    gib = sum(t.numel() for t in held) / (1 << 30)
    free, total = torch.cuda.mem_get_info(dev)
    wait_until(a.at or 0)
    t0 = time.time()
    say(event="start", kind=a.kind, gpu=a.gpu, pid=os.getpid(), t_unix=round(t0, 3),
        held_gib=round(gib, 2), free_gib=round(free / (1 << 30), 2))
    wait_until(t0 + a.seconds)
    return t0, gib * (time.time() - t0), "GiB", True


def cpu_worker(stop, ready, parent, hard_deadline):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ready.release()
    x = 1
    while not stop.value and os.getppid() == parent and time.time() < hard_deadline:
        for _ in range(100_000):  # ~5-10 ms of arithmetic between checks
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def cpu_hog(a):
    """One busy process per CPU; returns when the time is up (or on a signal)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")  # nothing heavy imported: fork is safe and quick
    wait_until(a.at or 0)
    stop, ready = ctx.Value("b", 0, lock=False), ctx.Semaphore(0)
    hard = time.time() + a.seconds + 30
    procs = [ctx.Process(target=cpu_worker, args=(stop, ready, os.getpid(), hard), daemon=True)
             for _ in range(os.cpu_count() or 1)]
    t0 = time.time()
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    say(event="start", kind=a.kind, gpu=None, pid=os.getpid(), t_unix=round(t0, 3),
        workers=len(procs))
    wait_until(t0 + a.seconds)
    stop.value = 1
    for p in procs:
        p.join(5)
    return t0, None, None, True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["compute", "memory", "copy", "cpu", "hostmem", "vram"])
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--at", type=float, default=None, help="Unix time to start the load at")
    p.add_argument("--gib", type=float, default=None,
                   help="buffer size (memory 4, copy 1, hostmem 2); vram: GiB left free (1)")
    a = p.parse_args()
    if a.gib is None:
        a.gib = {"memory": 4.0, "hostmem": 2.0}.get(a.kind, 1.0)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    hog = {"cpu": cpu_hog, "hostmem": hostmem_hog, "vram": vram_hog}.get(a.kind, gpu_hog)
    t0, work, unit, started = hog(a)
    t1 = time.time()
    gpu = None if a.kind in ("cpu", "hostmem") else a.gpu
    if not started:  # stopped before the first batch ended
        say(event="start", kind=a.kind, gpu=gpu, pid=os.getpid(), t_unix=round(t0, 3))
    say(event="end", kind=a.kind, gpu=gpu, pid=os.getpid(), t_unix=round(t1, 3),
        seconds=round(t1 - t0, 3), reason="signal" if STOP else "time",
        rate=round(work / (t1 - t0), 2) if work is not None and t1 > t0 else None, unit=unit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
