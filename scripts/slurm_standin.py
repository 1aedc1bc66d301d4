#!/usr/bin/env python3
"""A stand-in for Slurm's `srun` and `scontrol` on one GPU machine without Slurm (the device
machine): every node of a pretend allocation is this host with its own share of the GPUs, so that
`scalescope fleet run --slurm` (and `--between`) can run its job steps on real GPUs. CI runs the
real Slurm (tests/fleet_slurm.rs); this only stands in where Slurm cannot be installed.

Installed as `srun` and `scontrol` (symlinks to this file) first on PATH. Environment:
  FAKE_SLURM_NODES          n1,n2,n3,n4 — the allocation's nodes, in order
  FAKE_SLURM_GPUS_PER_NODE  GPUs per node: node j gets GPUs j*G … j*G+G-1 (CUDA_VISIBLE_DEVICES)
  SLURM_JOB_ID              passed on to every task
What srun sets per task is what Slurm sets (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
SLURM_NODEID, SLURM_NNODES, SLURMD_NODENAME, SLURM_STEP_ID); tasks share srun's stdout/stderr;
with --kill-on-bad-exit=1 the first task to fail ends the others; srun exits with the worst code.
"""

import os
import signal
import subprocess
import sys
import time


def nodes():
    return [n for n in os.environ.get("FAKE_SLURM_NODES", "").split(",") if n]


def scontrol(args):
    if args[:2] == ["show", "hostnames"]:
        print("\n".join(nodes()))
        return 0
    if args[:2] == ["show", "node"] and len(args) >= 3:
        print(f"NodeName={args[2]} NodeAddr=127.0.0.1 State=ALLOCATED")
        return 0
    print(f"scontrol stand-in: {' '.join(args)} is not stood in for", file=sys.stderr)
    return 1


def srun(args):
    opts = {}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        k, _, v = args[i][2:].partition("=")
        opts[k] = v
        i += 1
    command = args[i:]
    if not command:
        print("srun stand-in: no command", file=sys.stderr)
        return 1
    everyone = nodes()
    chosen = opts["nodelist"].split(",") if opts.get("nodelist") else everyone
    chosen = chosen[: int(opts.get("nodes", len(chosen)))]
    per_node = int(opts.get("ntasks-per-node", "1"))
    total = int(opts.get("ntasks", per_node * len(chosen)))
    if total != per_node * len(chosen):
        print("srun stand-in: --ntasks must be nodes x --ntasks-per-node", file=sys.stderr)
        return 1
    gpus = int(os.environ.get("FAKE_SLURM_GPUS_PER_NODE", "1"))
    step_file = "/tmp/fake-slurm-step"
    step = int(open(step_file).read()) + 1 if os.path.exists(step_file) else 0
    open(step_file, "w").write(str(step))
    procs = []
    for j, node in enumerate(chosen):
        at = everyone.index(node)
        visible = ",".join(str(g) for g in range(at * gpus, at * gpus + gpus))
        for local in range(per_node):
            env = dict(os.environ)
            env.update(
                SLURM_PROCID=str(j * per_node + local),
                SLURM_NTASKS=str(total),
                SLURM_LOCALID=str(local),
                SLURM_NODEID=str(j),
                SLURM_NNODES=str(len(chosen)),
                SLURMD_NODENAME=node,
                SLURM_STEP_ID=str(step),
                CUDA_VISIBLE_DEVICES=visible,
            )
            procs.append(subprocess.Popen(command, env=env))
    kill = opts.get("kill-on-bad-exit") == "1"
    worst = 0
    running = list(procs)
    while running:
        for p in list(running):
            rc = p.poll()
            if rc is None:
                continue
            running.remove(p)
            worst = max(worst, rc if rc >= 0 else 128 - rc)
            if rc != 0 and kill:
                for q in running:
                    q.send_signal(signal.SIGTERM)
        time.sleep(0.05)
    return worst


if __name__ == "__main__":
    me = os.path.basename(sys.argv[0])
    sys.exit(scontrol(sys.argv[1:]) if me == "scontrol" else srun(sys.argv[1:]))
