#!/usr/bin/env python3
"""An independent reader of one GPU's NVML energy counter and power, for checking scalescope's
energy figures (scripts/energy-check.sh): a separate process, started before the job and
stopped after it, writing `t_unix,energy_mj,power_mw` every --every-ms until SIGTERM or SIGINT.
No extra package: libnvidia-ml.so.1 through ctypes."""

import argparse
import ctypes
import signal
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", type=int, default=0, help="NVML index")
    ap.add_argument("--every-ms", type=float, default=50.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    if lib.nvmlInit_v2() != 0:
        print("energy_sampler: nvmlInit failed", file=sys.stderr)
        return 1
    handle = ctypes.c_void_p()
    if lib.nvmlDeviceGetHandleByIndex_v2(args.gpu, ctypes.byref(handle)) != 0:
        print(f"energy_sampler: no GPU {args.gpu}", file=sys.stderr)
        return 1
    stop = []
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.append(1))
    energy, power = ctypes.c_ulonglong(), ctypes.c_uint()
    with open(args.out, "w") as f:
        f.write("t_unix,energy_mj,power_mw\n")
        while not stop:
            e = lib.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(energy))
            p = lib.nvmlDeviceGetPowerUsage(handle, ctypes.byref(power))
            t = time.time()
            f.write(f"{t:.4f},{energy.value if e == 0 else ''},{power.value if p == 0 else ''}\n")
            f.flush()
            time.sleep(args.every_ms / 1e3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
