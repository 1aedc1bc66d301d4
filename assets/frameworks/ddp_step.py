#!/usr/bin/env python3
"""scalescope's reference training step: one catalog workload trained for real with PyTorch DDP.

scalescope writes this file (embedded in its binary) to a temporary folder and launches it with
`python3 -m torch.distributed.run --standalone --nproc_per_node=N ddp_step.py --spec JSON`, once
per GPU count: the spec is one workload's, or {"workloads": [spec, …]} for several in turn (one
process group; each model built once, its tensors freed before the next). It builds the workload's reference model (torchvision for the CNNs, transformers
configurations for GPT-2, BERT and Llama, or an equivalent stack of torch.nn transformer blocks
when transformers is missing), feeds it synthetic data that lives on the GPU, and trains it with
bf16 autocast, DistributedDataParallel with the workload's bucket size on two or more GPUs (the
plain model on one), and its optimizer.

Rank 0 prints one JSON object per line on standard output; every line has an "event" key:
  hello     versions, GPU, world size, the workloads of the launch
  progress  a phase started (build, warmup, measure, profile), with the mode
  result    one mode (weak or strong) measured: step time statistics, forward/backward/optimizer
            split, samples/s, peak memory, and optionally a kernel-time profile of a few steps
  oom       CUDA ran out of memory: the mode, the phase, and memory figures; exit code 3
  error     anything else that went wrong; exit code 1
  probe     the overlap probe (below): a launch of its own, {"probe": "overlap", …}, or the
            end of a launch of workloads whose spec holds "overlap_probe"
  done      every workload finished (and the probe, where one was asked)
Every line but hello, done and those of the probe at a launch's end (its progress, probe and
error lines) names its workload ("workload"). At world size 1 a workload that
fails (oom, error) ends alone and the next one runs; with more ranks the process ends there.
Nothing else is written to standard output; warnings go to standard error.

Timing: CUDA events around every step, forward and backward of every micro-batch and the
optimizer step, recorded without synchronizing inside the measured window (on a GPU the host
probe below synchronizes between steps about every probe_every_s — with more ranks every rank at
the same step, the period in steps set by rank 0; where steps are short, one untimed step then
refills the launch queue). The warm-up runs step
by step until warmup_s have passed (at least 3 steps; rank 0 decides after each; every run after
the process's first, on a GPU already warm, until warmup_next_s), and the
measured window holds enough steps for measure_s at the warm-up's last steady step time (at least
min_steps); every rank runs the counts rank 0 chose, so DDP never waits on a rank that stopped.
A step's time is the slowest rank's; step_ms holds the mean over steps (scalescope's figure: what a
run of those steps takes per step), the median, min and max. Where rank 0's steps
spread widely (p90 > noisy_spread × p10: a host whose speed wanders, as on shared VMs), the window
grows, in batches sized to end near noisy_measure_s (at most 4 × max_steps steps in all), so the
mean covers more than one of the host's fast or slow spells (the result says so: window_s,
extended).

Energy: each rank reads its GPU's NVML total-energy counter (mJ) and power (mW) through ctypes
(libnvidia-ml.so.1, no extra package) once when the script starts (idle_mw, before the model is
built), and at the start and the end of the measured window, after synchronizing; the result
carries every rank's raw readings (energy_mj, power_mw as [start, end], idle_mw,
power_limit_mw; sm_mhz, the lowest SM clock, and clock_events, NVML's clock event reasons
OR-ed, both read after each batch of steps is queued), the wall-clock window (window_t: Unix seconds, for a sampler run beside it) and
how many steps ran in it (window_steps: timed steps and the untimed refills). The host probes
drain the GPU, and their seconds are in the window (probe_s, probe_t: Unix intervals), so the
steps' own energy is read in stretches between drains (energy_stretches: per rank, a list of
[t0, e0, t1, e1], Unix seconds and mJ; class Stretches says how the counter's 100 ms updates are
kept out of the figure): scalescope takes the mean power over the stretches. It turns the
window's readings into joules where no stretch was read (a counter that went backwards is
refused, a missing counter falls back to the power readings, labeled so). A GPU NVML cannot read
gives nulls, never zeros.

DDP at one rank: at world size 1 the step is the plain one (no wrapper); with ddp_one (default
true, DDP workloads on a GPU) each mode's result also holds ddp_one_ms, the mean step under
DistributedDataParallel on a group of one, and ddp_one_plain_ms, the plain step timed in the
blocks between (ddp_one_steps of each), or ddp_one_note where the wrapped step could not run.

Host: at world size 1 each mode is also timed at a sixteenth of the micro-batch's work (the "host
floor": 16 times fewer samples, or shorter sequences where a language model's micro-batch has
fewer than 16; host_micro_batch, host_seq_len): the same kernels are launched, but they take
little GPU time, so that step's time is what the host needs to issue one step (Python,
PyTorch's dispatch and autograd, kernel launches).
A step whose host floor is as long as the step itself is host-bound: the GPU waits for the CPU.
HostProbe times a tiny fixed network the same way, so two machines' host speeds can be compared;
at world size 1 it runs between steps about every probe_every_s of the measured window
(host_probe_us: their median, the host's speed while the steps were timed) and just before and
after the host floor (host_floor_probe_us): on shared VMs the host's speed wanders in spells of
seconds, so each figure comes with the host speed it was measured at. With more ranks it runs on
every rank at the same steps (host_probe_rank_us: each rank's median; host_probe_us: the largest,
since the slowest host sets a synchronous step).
"""

import argparse
import contextlib
import ctypes
import gc
import json
import math
import os
import sys
import time
import traceback

SPEC_KEYS = {
    "workload": "catalog name, for the output",
    "model": "torchvision:<name> | transformers:gpt2 | transformers:bert | transformers:llama",
    "arch": "transformer sizes: layers, hidden, heads, seq_len, vocab, intermediate",
    "image_size": "CNN input side in pixels",
    "num_classes": "CNN classes",
    "micro_batch": "samples per GPU per forward/backward",
    "runs": "list of {mode, accumulate}: micro-batches per step",
    "bucket_mb": "DDP bucket_cap_mb",
    "parallel": "ddp (default) | fsdp (FSDP2, ZeRO-3)",
    "optimizer": "sgd | adamw",
    "warmup_s": "seconds of untimed steps",
    "warmup_next_s": "seconds of untimed steps of every run after the process's first (default: "
                     "warmup_s): the GPU is warm by then, a new shape still gets its own steps",
    "measure_s": "seconds of timed steps",
    "min_steps": "at least this many timed steps",
    "max_steps": "at most this many timed steps (a grown window: 4 times as many)",
    "noisy_spread": "p90 ÷ p10 of the steps above which the window grows (default 1.15)",
    "noisy_measure_s": "seconds of timed steps a noisy window grows to (default 0: no growth; "
                       "none unless above measure_s)",
    "min_energy_s": "seconds the energy stretches must span at least (default 0): the window "
                    "grows until they do, so the counter's ~100 ms steps are a small share",
    "profile_steps": "steps under torch.profiler after timing (0: none)",
    "host_floor": "read the host's speed during the window, and at world size 1 also time the "
                  "step at a sixteenth of its work (default true)",
    "probe_every_s": "seconds between host probe timings in a measured window (default 1.5)",
    "ddp_one": "at world size 1, also time the step under DDP on a group of one (default true)",
    "ddp_one_s": "seconds of steps for that timing, plain and wrapped together (default 2.4)",
    "ddp_one_max_step_s": "a run whose step is longer is not timed under DDP where an earlier run "
                          "of the workload was (default 0.5)",
    "overlap_probe": "beside the workloads: the overlap probe's spec, run at the end of the launch "
                     "on every rank (its lines as a launch of its own gives them)",
}

RANK = int(os.environ.get("RANK", "0"))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
# Under torchrun the process group is set up at any world size, but the model is wrapped in
# DDP (or sharded by FSDP2) only with two or more ranks: the 1-GPU step is the plain training
# step a user would run on one GPU, the baseline of speedup and efficiency. What the wrapper
# alone costs is timed apart at world size 1 ("ddp_one": wrapped_ms in the result).
DISTRIBUTED = "WORLD_SIZE" in os.environ
WRAPPED = DISTRIBUTED and WORLD > 1


def emit(event, **fields):
    """One JSON line on standard output, from rank 0 only."""
    if RANK == 0:
        fields = {"event": event, **fields}
        sys.stdout.write(json.dumps(fields, allow_nan=False) + "\n")
        sys.stdout.flush()


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    k = (len(sorted_values) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def stats(values):
    v = sorted(values)
    return {
        "median": percentile(v, 0.5),
        "min": v[0],
        "max": v[-1],
        "mean": sum(v) / len(v),
        "n": len(v),
    }


class Workload:
    """The model, its synthetic batch and its loss, for one spec."""

    def __init__(self, spec, device, torch):
        self.spec = spec
        self.torch = torch
        self.device = device
        self.impl = None
        kind = spec["model"]
        if kind.startswith("torchvision:"):
            self._build_cnn(kind.split(":", 1)[1])
        elif kind.startswith("transformers:"):
            self._build_transformer(kind.split(":", 1)[1])
        else:
            raise ValueError(f"unknown model kind {kind!r} (spec key 'model')")

    def _build_cnn(self, name):
        torch = self.torch
        import torchvision

        ctor = getattr(torchvision.models, name, None)
        if ctor is None:
            raise ValueError(f"torchvision has no model {name!r}")
        classes = int(self.spec.get("num_classes", 1000))
        side = int(self.spec.get("image_size", 224))
        with torch.device(self.device):
            self.model = ctor(num_classes=classes)
        # Tensor cores read NHWC: the memory format PyTorch's AMP guide recommends for CNNs.
        self.model = self.model.to(memory_format=torch.channels_last)
        self.impl = f"torchvision {torchvision.__version__} models.{name}, channels_last"
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.side, self.classes = side, classes
        self.make_batch = self._cnn_batch
        self.loss = self._cnn_loss

    def _cnn_batch(self, b):
        torch = self.torch
        x = torch.randn(b, 3, self.side, self.side, device=self.device)
        x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, self.classes, (b,), device=self.device)
        return (x, y)

    def _cnn_loss(self, model, batch):
        x, y = batch
        return self.loss_fn(model(x), y)

    def _build_transformer(self, family):
        torch = self.torch
        a = self.spec["arch"]
        self.family = family
        self.seq = int(a["seq_len"])
        self.vocab = int(a["vocab"])
        try:
            import transformers  # noqa: F401

            have_hf = True
        except ImportError:
            have_hf = False
            print("scalescope: transformers not installed: an equivalent torch.nn stack is used",
                  file=sys.stderr)
        with torch.device(self.device):
            if have_hf:
                self.model = self._hf_model(family, a)
            else:
                self.model = nn_stack(torch, family, a)
                self.impl = (f"torch.nn stack ({a['layers']} layers, hidden {a['hidden']}, "
                             f"{a['heads']} heads): transformers not installed")
        self.make_batch = self._lm_batch
        self.loss = self._lm_loss

    def _hf_model(self, family, a):
        import transformers as hf

        inter = int(a.get("intermediate", 4 * int(a["hidden"])))
        if family == "gpt2":
            cfg = hf.GPT2Config(vocab_size=self.vocab, n_positions=self.seq, n_embd=a["hidden"],
                                n_layer=a["layers"], n_head=a["heads"], n_inner=inter)
            model = hf.GPT2LMHeadModel(cfg)
        elif family == "bert":
            cfg = hf.BertConfig(vocab_size=self.vocab, hidden_size=a["hidden"],
                                num_hidden_layers=a["layers"], num_attention_heads=a["heads"],
                                intermediate_size=inter,
                                max_position_embeddings=max(512, self.seq))
            model = hf.BertForPreTraining(cfg)
        elif family == "llama":
            cfg = hf.LlamaConfig(vocab_size=self.vocab, hidden_size=a["hidden"],
                                 intermediate_size=inter, num_hidden_layers=a["layers"],
                                 num_attention_heads=a["heads"],
                                 max_position_embeddings=self.seq)
            model = hf.LlamaForCausalLM(cfg)
        else:
            raise ValueError(f"unknown transformer family {family!r}")
        attn = getattr(model.config, "_attn_implementation", None)
        self.impl = f"transformers {hf.__version__} {type(model).__name__}, attention {attn}"
        return model

    def floor_batch(self, micro, share=16):
        """A batch with about 1/share of a micro-batch's work and the same kernel launches, and
        how it was made: fewer samples, and for language models shorter sequences where the
        micro-batch has fewer than `share` samples (Llama-2-7B: 1 × 4096 tokens → 1 × 256).
        None where neither can be made small enough (a CNN with fewer than `share` images)."""
        tiny = max(1, int(micro) // share)
        if int(micro) >= share:
            return self.make_batch(tiny), {"host_micro_batch": tiny}
        if self.make_batch != self._lm_batch:
            return None
        seq = max(16, round(self.seq * int(micro) / (share * tiny)))
        return self._lm_batch(tiny, seq), {"host_micro_batch": tiny, "host_seq_len": seq}

    def _lm_batch(self, b, seq=None):
        torch = self.torch
        ids = torch.randint(0, self.vocab, (b, seq or self.seq), device=self.device)
        if self.family == "bert":
            nsp = torch.randint(0, 2, (b,), device=self.device)
            return (ids, nsp)
        return (ids, None)

    def _lm_loss(self, model, batch):
        ids, nsp = batch
        if getattr(getattr(model, "module", model), "is_nn_stack", False):
            return model(ids)
        if self.family == "bert":
            return model(input_ids=ids, labels=ids, next_sentence_label=nsp).loss
        return model(input_ids=ids, labels=ids).loss


def nn_stack(torch, family, a):
    """A transformer of the workload's size from torch.nn blocks (pre-norm, GELU, 4× MLP):
    causal for GPT-2 and Llama, bidirectional with an MLM head for BERT. Returns a module whose
    forward(ids) gives the language-modelling loss."""
    nn = torch.nn

    class Stack(nn.Module):
        is_nn_stack = True

        def __init__(self):
            super().__init__()
            d, layers, heads = int(a["hidden"]), int(a["layers"]), int(a["heads"])
            inter = int(a.get("intermediate", 4 * d))
            self.causal = family != "bert"
            self.tok = nn.Embedding(int(a["vocab"]), d)
            self.pos = nn.Embedding(int(a["seq_len"]), d)
            block = nn.TransformerEncoderLayer(d, heads, inter, dropout=0.1, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, int(a["vocab"]), bias=False)
            self.head.weight = self.tok.weight

        def forward(self, ids):
            s = ids.shape[1]
            pos = torch.arange(s, device=ids.device)
            h = self.tok(ids) + self.pos(pos)
            mask = nn.Transformer.generate_square_subsequent_mask(s, device=ids.device) \
                if self.causal else None
            h = self.blocks(h, mask=mask, is_causal=self.causal)
            logits = self.head(self.norm(h))
            return nn.functional.cross_entropy(logits.float().view(-1, logits.shape[-1]),
                                               ids.view(-1))

    return Stack()


def shard(torch, w, model):
    """FSDP2 (ZeRO-3): every transformer block, then the whole model, sharded over the ranks;
    parameters all-gathered before use and gradients reduce-scattered."""
    from torch.distributed.fsdp import fully_shard

    inner = model
    blocks = None
    for path in ("transformer.h", "model.layers", "bert.encoder.layer", "blocks.layers"):
        obj = inner
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            blocks = obj
            break
    for block in blocks or []:
        fully_shard(block)
    return fully_shard(model)


def no_sync(model):
    """Skips the gradient all-reduce (DDP) or reduce-scatter (FSDP2) of a micro-batch that is
    not the step's last."""
    if hasattr(model, "no_sync"):
        return model.no_sync()

    @contextlib.contextmanager
    def fsdp():
        model.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            model.set_requires_gradient_sync(True)

    return fsdp()


def build_optimizer(torch, spec, params, cuda):
    name = spec.get("optimizer", "sgd")
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, fused=cuda)
    raise ValueError(f"unknown optimizer {name!r} (sgd, adamw)")


class Timer:
    """CUDA events on the current stream (host clocks on CPU, where events do not exist)."""

    def __init__(self, torch, cuda):
        self.torch, self.cuda = torch, cuda

    def mark(self):
        if self.cuda:
            e = self.torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b):
        if self.cuda:
            return a.elapsed_time(b)
        return (b - a) * 1e3

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


class Energy:
    """This rank's GPU through NVML: the total-energy counter (mJ) and power (mW), or None for
    what this GPU or driver does not give (no NVML at all: every reading None)."""

    def __init__(self, torch, device, cuda):
        self.lib = self.handle = None
        if not cuda:
            return
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            handle = ctypes.c_void_p()
            uuid = str(torch.cuda.get_device_properties(device).uuid)
            for name in (uuid, "GPU-" + uuid):
                if lib.nvmlDeviceGetHandleByUUID(name.encode(), ctypes.byref(handle)) == 0:
                    self.lib, self.handle = lib, handle
                    return
        except (OSError, AttributeError):
            pass

    def _read(self, fn, kind):
        if self.lib is None:
            return None
        v = kind()
        try:
            if getattr(self.lib, fn)(self.handle, ctypes.byref(v)) != 0:
                return None
        except AttributeError:
            return None
        return int(v.value)

    def energy_mj(self):
        return self._read("nvmlDeviceGetTotalEnergyConsumption", ctypes.c_ulonglong)

    def power_mw(self):
        return self._read("nvmlDeviceGetPowerUsage", ctypes.c_uint)

    def limit_mw(self):
        return self._read("nvmlDeviceGetEnforcedPowerLimit", ctypes.c_uint)

    def clocks(self):
        """(SM clock MHz, clock event reasons bitmask) now, each None where NVML gives none."""
        mhz = None
        if self.lib is not None:
            v = ctypes.c_uint()
            try:
                if self.lib.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(v)) == 0:
                    mhz = int(v.value)  # 1 = NVML_CLOCK_SM
            except AttributeError:
                pass
        reasons = (self._read("nvmlDeviceGetCurrentClocksEventReasons", ctypes.c_ulonglong)
                   if self.lib is not None else None)
        if reasons is None:
            reasons = self._read("nvmlDeviceGetCurrentClocksThrottleReasons", ctypes.c_ulonglong)
        return mhz, reasons


def gather(torch, dist, value):
    """Every rank's `value` (any JSON-able object), in rank order."""
    if WORLD == 1:
        return [value]
    out = [None] * WORLD
    dist.all_gather_object(out, value)
    return out


def agree(torch, dist, value, device):
    """rank 0's integer, on every rank (DDP must run the same number of steps everywhere)."""
    if WORLD == 1:
        return value
    t = torch.tensor([value], dtype=torch.int64, device=device)
    dist.broadcast(t, 0)
    return int(t.item())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", required=True, help="JSON object: " + ", ".join(SPEC_KEYS))
    ap.add_argument("--cpu", action="store_true", help="run on the CPU with gloo (tests)")
    args = ap.parse_args()
    spec = json.loads(args.spec)
    if spec.get("probe") == "overlap":
        return overlap_probe(spec, args.cpu)
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        emit("error", kind="no_torch", message=f"PyTorch cannot be imported: {e}")
        return 1

    cuda = torch.cuda.is_available() and not args.cpu
    if cuda:
        torch.cuda.set_device(LOCAL_RANK)
        device = torch.device("cuda", LOCAL_RANK)
        torch.backends.cudnn.benchmark = True
    else:
        device = torch.device("cpu")
    if DISTRIBUTED:
        dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)

    def versions():
        v = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": sys.version.split()[0]}
        try:
            v["nccl"] = ".".join(map(str, torch.cuda.nccl.version())) if cuda else None
        except Exception:
            v["nccl"] = None
        try:
            import transformers

            v["transformers"] = transformers.__version__
        except ImportError:
            v["transformers"] = None
        return v

    energy = Energy(torch, device, cuda)
    # Before any model is built: the GPU as the run found it (idle unless something else runs).
    idle_mw = energy.power_mw()
    gpu = torch.cuda.get_device_name(device) if cuda else "cpu"
    # One workload, or several in turn ("workloads": a list of specs, each with every key of
    # one; keys beside the list apply to all): one process group, each model built once.
    # The overlap probe at the end of the launch (every rank, this process group), after the
    # workloads' steps: a launch of its own would start Python, CUDA and NCCL again.
    then_probe = spec.pop("overlap_probe", None)
    common = {k: v for k, v in spec.items() if k != "workloads"}
    specs = [{**common, **s} for s in spec["workloads"]] if "workloads" in spec else [spec]
    emit("hello", workload=specs[0].get("workload") if len(specs) == 1 else None,
         workloads=[s.get("workload") for s in specs], world_size=WORLD, gpu=gpu,
         device=str(device), **versions())
    worst = 0
    try:
        for i, one in enumerate(specs):
            worst = max(worst, train(one, torch, dist, device, cuda, energy, idle_mw,
                                     first=i == 0))
            # The next workload starts on a GPU without this one's tensors.
            gc.collect()
            if cuda:
                torch.cuda.empty_cache()
        if then_probe is not None:
            emit("progress", phase="overlap probe")
            try:
                measure_overlap(then_probe, torch, dist, device, cuda)
            except Exception as e:  # noqa: BLE001 - the workloads' results stand without it
                emit("error", kind=type(e).__name__, phase="overlap probe",
                     message="overlap probe: " + (str(e).splitlines()[0][:300] if str(e)
                                                  else type(e).__name__))
                traceback.print_exc(file=sys.stderr)
                sys.stdout.flush()
                if WORLD > 1:
                    # Other ranks may wait in the probe's collectives: leave at once.
                    os._exit(1)
        emit("done")
        return worst
    finally:
        if DISTRIBUTED and dist.is_initialized():
            with contextlib.suppress(Exception):
                dist.destroy_process_group()


def train(spec, torch, dist, device, cuda, energy, idle_mw, first=True):
    """One workload's modes, measured; its result lines emitted. 0 when every mode ran; at world
    size 1 a workload that fails (out of memory: 3, anything else: 1) ends alone and the next
    one runs; with more ranks the process ends at once (the others may wait in a collective).
    `first`: the process's first workload, whose first run meets a cold GPU."""
    mode = None
    phase = "build"
    timer = Timer(torch, cuda)
    name = spec.get("workload")

    def emit(event, **fields):
        globals()["emit"](event, workload=name, **fields)

    try:
        emit("progress", phase="build")
        w = Workload(spec, device, torch)
        params = sum(p.numel() for p in w.model.parameters())
        model = w.model
        parallel = spec.get("parallel", "ddp")

        def ddp(module):
            return torch.nn.parallel.DistributedDataParallel(
                module, device_ids=[LOCAL_RANK] if cuda else None,
                bucket_cap_mb=float(spec.get("bucket_mb", 25)))

        if WRAPPED and parallel == "fsdp":
            model = shard(torch, w, model)
        elif WRAPPED:
            model = ddp(model)
        opt = build_optimizer(torch, spec, model.parameters(), cuda)
        emit("progress", phase="built", model=w.impl, params=params)
        micro = int(spec["micro_batch"])
        batch = w.make_batch(micro)
        autocast = torch.autocast(device.type, dtype=torch.bfloat16)

        def step(accumulate, marks, data=None, net=None):
            net = model if net is None else net
            opt.zero_grad(set_to_none=True)
            for i in range(accumulate):
                last = i == accumulate - 1
                wrapped = WRAPPED if net is model else net is not w.model
                sync = contextlib.nullcontext() if (last or not wrapped) else no_sync(net)
                with sync:
                    with autocast:
                        loss = w.loss(net, batch if data is None else data)
                    if marks is not None:
                        marks.append(("fwd", timer.mark()))
                    loss.backward()
                    if marks is not None:
                        marks.append(("bwd", timer.mark()))
            opt.step()
            if marks is not None:
                marks.append(("opt", timer.mark()))

        if spec.get("sync_debug") and cuda:
            # Names every operation that makes the host wait for the GPU (a data-dependent
            # check such as torch.all(mask == 1)): such waits leave the GPU idle between steps.
            import warnings

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                torch.cuda.set_sync_debug_mode("warn")
                step(1, None)
                torch.cuda.set_sync_debug_mode("default")
            emit("syncs", count=len(caught),
                 where=sorted({str(c.message).splitlines()[0][:200] for c in caught})[:10])
            torch.cuda.synchronize()

        # The host's speed is read during every measured window (the host probe between steps,
        # about every probe_every_s) and, at world size 1, beside the host floor: on shared VMs
        # it wanders in spells of seconds, so a reading taken at another time describes another
        # host. With more ranks it runs at the same step on every rank (a probe on one rank alone
        # would hold the others in the next step's all-reduce); the model does not read it there.
        watch_host = cuda and spec.get("host_floor", True)
        probe = HostProbe(torch, device) if watch_host else None
        probe_every = float(spec.get("probe_every_s", 1.5))
        timed_wrapper = False
        for k, run in enumerate(spec["runs"]):
            mode = run["mode"]
            acc = int(run.get("accumulate", 1))
            torch.cuda.reset_peak_memory_stats(device) if cuda else None
            phase = "warmup"
            emit("progress", phase=phase, mode=mode)
            # Warm-up by elapsed time, one step at a time: the first steps carry one-time costs
            # (cuDNN autotuning, allocator growth, clocks ramping), so neither their count nor
            # their duration says anything about the steady step. Rank 0 decides after each step
            # whether to go on (every rank must run the same steps); the steady step time is the
            # median of the last three.
            # The process's first run meets a cold GPU (clocks, temperature, the allocator);
            # later ones a warm GPU, and only their own shapes are new.
            warm_s = float(spec.get("warmup_s", 3))
            if not (first and k == 0):
                warm_s = min(warm_s, float(spec.get("warmup_next_s", warm_s)))
            t_start = time.perf_counter()
            recent = []
            done = 0
            while True:
                timer.sync()
                t0 = time.perf_counter()
                step(acc, None)
                timer.sync()
                recent = (recent + [time.perf_counter() - t0])[-3:]
                done += 1
                go_on = done < 3 or time.perf_counter() - t_start < warm_s
                if not agree(torch, dist, int(go_on), device):
                    break
            per_step = sorted(recent)[len(recent) // 2]
            steps = agree(torch, dist, min(int(spec.get("max_steps", 50)),
                                           max(int(spec.get("min_steps", 5)),
                                               math.ceil(float(spec.get("measure_s", 5)) / per_step))),
                          device)
            phase = "measure"
            emit("progress", phase=phase, mode=mode, steps=steps)
            records = []
            refills = 0
            timer.sync()
            window_t0 = time.time()
            e0, p0 = energy.energy_mj(), energy.power_mw()
            # The energy of the steps alone: stretches between drains (host probes, the syncs
            # between batches), each read while the GPU has run steps long enough that the
            # counter's last update lies inside them (Stretches).
            stretches = Stretches(energy, timer)
            t_measure = time.perf_counter()
            extended = False
            # A noisy window grows (rank 0 decides how many more steps; 0 = stop) until
            # noisy_measure_s have passed, sized to end near it, never past 4 × max_steps.
            noisy_s = float(spec.get("noisy_measure_s", 0))
            cap = int(spec.get("max_steps", 50)) * 4
            chunk = steps
            probe_us = []
            last_probe = None
            # Clocks and their event reasons, read after each chunk is queued (the GPU still
            # busy, before the sync that drains it): the lowest SM clock and every reason seen.
            sm_mhz, clock_events = None, None
            probe_s, probe_t = 0.0, []
            # The probe synchronizes: the GPU drains, and the next step would start with no host
            # lead (on a step the GPU barely sets, the host's hiccups then show). Where steps are
            # short, one untimed step refills the queue first; long steps lose little to it.
            refill = bool(agree(torch, dist, int(per_step * 2 <= probe_every), device))
            # Ranks probe by step count (rank 0's steady step sets the period), not by clock.
            period = agree(torch, dist, max(1, round(probe_every / max(per_step, 1e-6))), device)
            while True:
                for _ in range(chunk):
                    if probe and ((WORLD > 1 and len(records) % period == 0)
                                  or (WORLD == 1 and (last_probe is None
                                      or time.perf_counter() - last_probe >= probe_every))):
                        # CUDA events time each step alone: the probe is in no step's time,
                        # and it ends a stretch of the steps' energy (Stretches).
                        stretches.close()
                        qt0, qw0 = time.perf_counter(), time.time()
                        probe_us.append(probe.timing())
                        last_probe = time.perf_counter()
                        if WORLD > 1:
                            # The ranks' probes end at different times: line them up (a
                            # broadcast every rank waits on), or the earlier rank's next step
                            # would time its wait for the others.
                            agree(torch, dist, 0, device)
                        probe_s += time.perf_counter() - qt0
                        probe_t.append([qw0, time.time()])
                        if refill:
                            stretches.begin(timer.mark())
                            step(acc, None)
                            stretches.after_step(timer.mark())
                            refills += 1
                    marks = [("start", timer.mark())]
                    stretches.begin(marks[0][1])
                    step(acc, marks)
                    records.append(marks)
                    stretches.after_step(marks[-1][1])
                mhz, why = energy.clocks()
                if mhz is not None:
                    sm_mhz = mhz if sm_mhz is None else min(sm_mhz, mhz)
                if why is not None:
                    clock_events = why if clock_events is None else clock_events | why
                stretches.close()
                timer.sync()
                own = sorted(timer.ms(m[0][1], m[-1][1]) for m in records)
                spread = float(spec.get("noisy_spread", 1.15))
                left_s = noisy_s - (time.perf_counter() - t_measure)
                more = 0
                if (noisy_s > float(spec.get("measure_s", 5)) and left_s > 0
                        and percentile(own, 0.9) > spread * percentile(own, 0.1)):
                    # Wall time per timed step, so host probes and refills are counted too.
                    per_s = max(percentile(own, 0.5) / 1e3,
                                (time.perf_counter() - t_measure) / len(records), 1e-4)
                    more = max(0, min(steps, cap - len(records), math.ceil(left_s / per_s)))
                # The energy's stretches (rank 0's) span at least min_energy_s: the host probes
                # take their share of the window out, and what is left must be long enough for
                # the counter's ~100 ms steps to be a small part of it. Not a noisy window.
                grows_for_energy = False
                need = float(spec.get("min_energy_s", 0))
                got = sum(x[2] - x[0] for x in stretches.done)
                if more == 0 and stretches.on and 0 < got < need and len(records) < cap:
                    wall = time.perf_counter() - t_measure
                    per_s = max(wall / len(records), 1e-4)
                    share = max(got / max(wall, 1e-6), 0.2)
                    more = max(1, min(cap - len(records), math.ceil((need - got) / share / per_s)))
                    grows_for_energy = True
                chunk = agree(torch, dist, more, device)
                if chunk <= 0:
                    break
                if grows_for_energy:
                    continue
                extended = True
                emit("progress", phase=phase, mode=mode, steps=len(records) + chunk, extended=True)
            window_s = time.perf_counter() - t_measure
            e1, p1 = energy.energy_mj(), energy.power_mw()
            window_t1 = time.time()
            steps = len(records)
            power = gather(torch, dist, {"energy_mj": [e0, e1], "power_mw": [p0, p1],
                                         "idle_mw": idle_mw, "limit_mw": energy.limit_mw(),
                                         "sm_mhz": sm_mhz, "clock_events": clock_events,
                                         "stretches": stretches.done})
            rows = []
            for marks in records:
                fwd = bwd = 0.0
                prev = marks[0][1]
                for kind, m in marks[1:]:
                    dt = timer.ms(prev, m)
                    if kind == "fwd":
                        fwd += dt
                    elif kind == "bwd":
                        bwd += dt
                    prev = m
                rows.append([timer.ms(marks[0][1], marks[-1][1]), fwd, bwd,
                             timer.ms(marks[-2][1], marks[-1][1])])
            if WORLD > 1:
                gathered = [None] * WORLD
                dist.all_gather_object(gathered, rows)
            else:
                gathered = [rows]
            step_ms = [max(r[i][0] for r in gathered) for i in range(steps)]
            per_rank = [stats([row[0] for row in r])["median"] for r in gathered]
            mine = gathered[0]
            peak = torch.cuda.max_memory_allocated(device) / 2**30 if cuda else None
            reserved = torch.cuda.max_memory_reserved(device) / 2**30 if cuda else None
            peaks = [peak]
            if WORLD > 1 and cuda:
                peaks = [None] * WORLD
                dist.all_gather_object(peaks, peak)
            host = {}
            if probe and WORLD > 1:
                # The slowest host sets a synchronous step: the largest of the ranks' medians.
                meds = [None] * WORLD
                dist.all_gather_object(meds, stats(probe_us)["median"] if probe_us else None)
                known = [m for m in meds if m is not None]
                if known:
                    host = {"host_probe_us": max(known), "host_probe_rank_us": meds,
                            "host_probes": len(probe_us)}
            elif probe:
                phase = "host"
                emit("progress", phase=phase, mode=mode)
                host = host_floor(torch, timer, w, micro, lambda d: step(acc, None, d), probe)
                host["host_probe_us"] = stats(probe_us)["median"]
                host["host_probes"] = len(probe_us)
            prof = None
            if int(spec.get("profile_steps", 0)) > 0 and cuda:
                phase = "profile"
                emit("progress", phase=phase, mode=mode)
                prof = profile(torch, lambda: step(acc, None), int(spec["profile_steps"]))
                if WORLD > 1:
                    profs = [None] * WORLD
                    dist.all_gather_object(profs, prof)
                    prof = {"ranks": profs}
                else:
                    prof = {"ranks": [prof]}
            # What DDP's wrapper alone costs at one rank (bucket copies, hooks, the all-reduce
            # issued on a group of one): the wrapped and the plain step in alternating blocks,
            # so that both meet the same host speed.
            wrapper = {}
            # A run whose step is long (a strong mode's whole global batch) is not timed again
            # when another run of this workload was: the wrapper's cost is one pass over the
            # buckets per step in either mode, and 36 long steps would cost minutes.
            again_long = timed_wrapper and per_step > float(spec.get("ddp_one_max_step_s", 0.5))
            if (DISTRIBUTED and not WRAPPED and parallel == "ddp" and cuda
                    and spec.get("ddp_one", True) and not again_long):
                phase = "ddp_one"
                emit("progress", phase=phase, mode=mode)
                wrapper = wrapper_cost(torch, timer, ddp, w.model, lambda net: step(acc, None,
                                                                                   net=net),
                                       per_step, float(spec.get("ddp_one_s", 2.4)))
                timed_wrapper = timed_wrapper or "ddp_one_ms" in wrapper
            s = stats(step_ms)
            samples = micro * acc * WORLD
            emit("result", mode=mode, world_size=WORLD,
                 micro_batch=micro, accumulate=acc, per_gpu_batch=micro * acc,
                 global_batch=samples, steps=steps, step_ms=s, rank_median_ms=per_rank,
                 window_s=round(window_s, 2), extended=extended,
                 step_samples_ms=[round(x, 4) for x in step_ms[:1000]],
                 fwd_ms=stats([r[1] for r in mine])["median"],
                 bwd_ms=stats([r[2] for r in mine])["median"],
                 opt_ms=stats([r[3] for r in mine])["median"],
                 samples_per_s=samples / (s["mean"] / 1e3),
                 peak_mem_gib=max(p for p in peaks if p is not None) if cuda else None,
                 reserved_gib=reserved, params=params, model=w.impl, profile=prof,
                 window_steps=steps + refills, window_t=[window_t0, window_t1],
                 window_wall_s=window_t1 - window_t0, probe_s=probe_s, probe_t=probe_t,
                 energy_mj=[r["energy_mj"] for r in power], power_mw=[r["power_mw"] for r in power],
                 idle_mw=[r["idle_mw"] for r in power], power_limit_mw=[r["limit_mw"] for r in power],
                 sm_mhz=[r["sm_mhz"] for r in power],
                 clock_events=[r["clock_events"] for r in power],
                 energy_stretches=[r["stretches"] for r in power],
                 wrapped=("ddp" if WRAPPED and parallel == "ddp" else
                          "fsdp" if WRAPPED else None),
                 **host, **wrapper)
        return 0
    except Exception as e:  # noqa: BLE001 - every failure becomes one JSON line
        oom = type(e).__name__ == "OutOfMemoryError" or "out of memory" in str(e).lower()
        if oom:
            total = torch.cuda.get_device_properties(device).total_memory / 2**30 if cuda else None
            emit("oom", mode=mode, phase=phase, world_size=WORLD,
                 message=str(e).splitlines()[0][:400],
                 peak_mem_gib=torch.cuda.max_memory_allocated(device) / 2**30 if cuda else None,
                 total_mem_gib=total)
            sys.stdout.flush()
            if WORLD > 1:
                # Other ranks may be waiting in a collective: leave at once, torchrun ends them.
                os._exit(3)
            return 3
        emit("error", kind=type(e).__name__, mode=mode, phase=phase,
             message=str(e).splitlines()[0][:400] if str(e) else type(e).__name__)
        traceback.print_exc(file=sys.stderr)
        sys.stdout.flush()
        if WORLD > 1:
            os._exit(1)
        return 1


class Stretches:
    """The energy of stretches of back-to-back steps, each [t0, e0, t1, e1] (Unix seconds, mJ).

    NVML's total-energy counter moves in steps (about every 100 ms on H100 and H200): a reading
    is the counter at its last update. A stretch is therefore read only while the GPU runs
    steps: it starts once the GPU has run `busy_ms` of them since the last drain (CUDA events
    say so without waiting), so the update the reading holds lies inside the steps, and it
    closes before the next drain (a host probe, a sync). Both ends then lag the truth by a part
    of one update at the steps' own power: the stretch's mean power is unbiased, and the host
    probes, the drains and their idle power are in none of them."""

    def __init__(self, energy, timer, busy_ms=120.0):
        self.energy, self.timer, self.busy_ms = energy, timer, busy_ms
        self.on = energy.lib is not None and timer.cuda
        self.open = None
        self.done = []

    def begin(self, start_event):
        """The step about to be queued follows a drain (or the stretch is already open)."""
        if self.on and self.open is None:
            self.open = {"first": start_event, "ends": [], "tail": [], "read": None}

    def after_step(self, end_event):
        """A step was queued: read the start once the GPU has run busy_ms since the drain."""
        o = self.open
        if o is None:
            return
        # The last two steps' ends: close waits on the one before last.
        o["tail"] = (o["tail"] + [end_event])[-2:]
        if o["read"] is not None:
            return
        o["ends"].append(end_event)
        done = None
        while o["ends"] and o["ends"][0].query():
            done = o["ends"].pop(0)
        if done is not None and o["first"].elapsed_time(done) >= self.busy_ms:
            e = self.energy.energy_mj()
            if e is not None:
                o["read"] = (time.time(), e)
            o["ends"] = []

    def close(self):
        """Before a drain: the stretch's end, read while the GPU runs the last queued step. The
        host runs ahead of the GPU (ResNet-50's 93 steps of a 5 s window are queued in about a
        second), so it first waits until the step before the last has ended: the stretch then
        spans the GPU's steps, not the host's queueing of them."""
        o, self.open = self.open, None
        if o is None or o["read"] is None:
            return
        if len(o["tail"]) == 2:
            while not o["tail"][0].query():
                time.sleep(0.0005)
        e1 = self.energy.energy_mj()
        if e1 is not None and e1 >= o["read"][1]:
            self.done.append([o["read"][0], o["read"][1], time.time(), e1])


def wrapper_cost(torch, timer, wrap, module, run_step, per_step, seconds):
    """DDP at one rank against the plain step: blocks of plain and wrapped steps in turn (three
    each), CUDA-event times; {"ddp_one_ms", "ddp_one_plain_ms", "ddp_one_steps"}, or
    {"ddp_one_note"} where the wrapped step could not run (out of memory). The wrapper is
    removed afterwards (its reducer's hooks go with it)."""
    k = max(3, math.ceil(seconds / 6 / max(per_step, 1e-3)))
    plain, wrapped = [], []
    net = None
    try:
        net = wrap(module)
        for _ in range(2):
            run_step(net)
        timer.sync()
        for _ in range(3):
            for target, out in ((module, plain), (net, wrapped)):
                marks = []
                for _ in range(k):
                    a = timer.mark()
                    run_step(target)
                    marks.append((a, timer.mark()))
                timer.sync()
                out.extend(timer.ms(a, b) for a, b in marks)
    except Exception as e:  # noqa: BLE001 - the plain result stands without it
        if not (type(e).__name__ == "OutOfMemoryError" or "out of memory" in str(e).lower()):
            raise
        return {"ddp_one_note": "DDP at one rank ran out of GPU memory: "
                                + str(e).splitlines()[0][:200]}
    finally:
        del net
        gc.collect()
        torch.cuda.empty_cache()
    # Means, as the row's step (its figure is the mean over its steps).
    return {"ddp_one_ms": stats(wrapped)["mean"], "ddp_one_plain_ms": stats(plain)["mean"],
            "ddp_one_steps": len(wrapped)}


def host_floor(torch, timer, w, micro, run_step, probe, seconds=2.0):
    """The step at a sixteenth of the micro-batch's work (Workload.floor_batch: 16 times fewer
    samples, or shorter sequences): the same kernels, launched the same way, but each takes a
    sixteenth of the GPU time, so the step's time is the host's. Mean of CUDA-event times over
    about `seconds` of steps, after three untimed ones (a new shape: allocator growth, cuDNN
    autotuning); the host probe just before and just after them says how fast the host was
    meanwhile (host_floor_probe_us, their mean). Empty where no such batch can be made: a step
    at the full micro-batch would measure the GPU, not the host."""
    small = w.floor_batch(micro)
    if small is None:
        return {}
    data, how = small
    for _ in range(3):
        run_step(data)
    timer.sync()
    t0 = time.perf_counter()
    run_step(data)
    timer.sync()
    k = min(50, max(5, math.ceil(seconds / max(time.perf_counter() - t0, 1e-3))))
    before = probe.timing()
    marks = []
    for _ in range(k):
        a = timer.mark()
        run_step(data)
        marks.append((a, timer.mark()))
    timer.sync()
    after = probe.timing()
    # The mean, as the step it is set against (the step's figure is the mean over its steps).
    return {"host_ms": stats([timer.ms(a, b) for a, b in marks])["mean"],
            "host_steps": k, "host_floor_probe_us": (before + after) / 2, **how}


class HostProbe:
    """Host speed, µs per iteration: forward and backward (bf16 autocast) of a tiny network of
    8 blocks (Linear 64→64, LayerNorm, GELU, Dropout) on 8 samples. Its kernels take almost no
    GPU time, so this measures Python, PyTorch's dispatch and autograd, and kernel launches —
    what a host-bound training step spends its time on."""

    def __init__(self, torch, device):
        nn = torch.nn
        blocks = []
        for _ in range(8):
            blocks += [nn.Linear(64, 64), nn.LayerNorm(64), nn.GELU(), nn.Dropout(0.1)]
        self.torch, self.device = torch, device
        self.net = nn.Sequential(*blocks).to(device)
        self.x = torch.randn(8, 64, device=device)
        self.sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
        for _ in range(5):
            self.once()

    def once(self):
        with self.torch.autocast(self.device.type, dtype=self.torch.bfloat16):
            y = self.net(self.x).float().sum()
        y.backward()

    def timing(self, iters=40):
        """One timing: `iters` iterations after the GPU has finished what was queued, µs each."""
        self.sync()
        t0 = time.perf_counter()
        for _ in range(iters):
            self.once()
        self.sync()
        return (time.perf_counter() - t0) / iters * 1e6


def host_probe(torch, device, reps=15, iters=40, seconds=8.0):
    """HostProbe's median over timings of `iters` iterations each, at least `reps` of them and
    for at least `seconds`: on shared VMs the host's speed wanders in spells of seconds, and a
    probe shorter than one spell reads only that spell."""
    probe = HostProbe(torch, device)
    times = []
    start = time.perf_counter()
    while len(times) < reps or time.perf_counter() - start < seconds:
        times.append(probe.timing(iters))
    return stats(times)["median"]


MATRIX = ("gemm", "conv", "cutlass", "xmma", "nvjet", "wgmma", "sm90_", "sm80_", "cudnn",
          "dgrad", "wgrad", "fprop", "flash", "fmha", "implicit_convolve", "cublas")


def profile(torch, run_step, steps):
    """Kernel time per step on this rank, by kind: matrix (GEMM, convolution, attention), NCCL,
    other (element-wise, normalisation, optimizer), the GPU's busy time (union of compute
    kernels), the time NCCL overlapped compute, and the step's wall time."""
    from torch.profiler import ProfilerActivity, profile as tprofile

    torch.cuda.synchronize()
    with tprofile(activities=[ProfilerActivity.CUDA]) as p:
        t0 = time.perf_counter()
        for _ in range(steps):
            run_step()
        torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - t0) * 1e3
    kinds = {"matrix": 0.0, "nccl": 0.0, "other": 0.0}
    compute, comm = [], []
    for e in p.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        name = e.name.lower()
        start, end = e.time_range.start, e.time_range.end
        if end <= start:
            continue
        if "nccl" in name:
            kinds["nccl"] += (end - start) / 1e3
            comm.append((start, end))
            continue
        kinds["matrix" if any(m in name for m in MATRIX) else "other"] += (end - start) / 1e3
        compute.append((start, end))
    busy = union(compute)
    overlap = intersect(union(compute, keep=True), union(comm, keep=True))
    per = {k: v / steps for k, v in kinds.items()}
    per.update(busy_ms=busy / 1e3 / steps, nccl_overlap_ms=overlap / 1e3 / steps,
               wall_ms=wall_ms / steps)
    return per


def union(intervals, keep=False):
    merged = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged if keep else sum(e - s for s, e in merged)


def intersect(a, b):
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def overlap_probe(spec, cpu):
    """How much of an all-reduce a compute stream hides, on this machine: every rank runs a mix
    of bf16 GEMMs (matrix_share of the time) and memory-bound element-wise passes on one stream,
    and all-reduces of bucket_bytes on another, first each alone, then both at once.
    hidden = (T_compute + T_comm − T_both) ÷ T_comm: 1 when the all-reduces cost nothing under
    compute, 0 when the two serialise. Also reports the GEMM rate and the copy bandwidth."""
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available() and not cpu
    device = torch.device("cuda", LOCAL_RANK) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if DISTRIBUTED:
        dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    measure_overlap(spec, torch, dist, device, cuda)
    if DISTRIBUTED:
        dist.destroy_process_group()
    return 0


def measure_overlap(spec, torch, dist, device, cuda):
    """The overlap probe's measurements on a process group already set up: one "probe" line
    per matrix share (rank 0)."""
    dt = torch.bfloat16
    side = int(spec.get("gemm_side", 4096))
    a = torch.randn(side, side, device=device, dtype=dt)
    b = torch.randn(side, side, device=device, dtype=dt)
    c = torch.empty(side, side, device=device, dtype=dt)
    big = torch.randn(int(spec.get("elementwise_bytes", 1 << 28)) // 2, device=device, dtype=dt)
    big2 = torch.empty_like(big)
    bucket = int(spec.get("bucket_bytes", 26214400)) // 4
    bufs = [torch.randn(bucket, device=device) for _ in range(int(spec.get("buffers", 4)))]
    s_comp = torch.cuda.Stream(device) if cuda else None
    s_comm = torch.cuda.Stream(device) if cuda else None
    timer = Timer(torch, cuda)

    def barrier():
        timer.sync()
        if DISTRIBUTED:
            dist.barrier(device_ids=[LOCAL_RANK] if cuda else None)
        timer.sync()

    def timed(fn):
        barrier()
        t0 = time.perf_counter()
        fn()
        timer.sync()
        return (time.perf_counter() - t0) * 1e3

    def gemms(k):
        for _ in range(k):
            torch.matmul(a, b, out=c)

    def passes(k):
        for _ in range(k):
            big2.copy_(big)

    # Rates alone: the unit costs of the mix.
    with torch.cuda.stream(s_comp):
        gemms(3), passes(3)
        t_gemm = timed(lambda: gemms(50)) / 50
        t_pass = timed(lambda: passes(50)) / 50
    gemm_tflops = 2 * side**3 / (t_gemm * 1e-3) / 1e12
    copy_gbps = big.numel() * 2 * 2 / (t_pass * 1e-3) / 1e9

    target = float(spec.get("compute_ms", 200))
    n_ar = int(spec.get("allreduces", 64))

    def comm():
        with torch.cuda.stream(s_comm):
            for i in range(n_ar):
                dist.all_reduce(bufs[i % len(bufs)]) if DISTRIBUTED else bufs[0].mul_(1.0)

    # Host speed, rank 0 alone (the others wait at the barrier).
    host_us = (host_probe(torch, device, seconds=float(spec.get("host_probe_s", 8.0)))
               if RANK == 0 else None)
    barrier()
    # What the host spends issuing one all-reduce (DDP issues one per gradient bucket from the
    # host): 200 small asynchronous all-reduces, every rank at once, host time per call.
    allreduce_host_us = None
    if DISTRIBUTED and WORLD > 1:
        small = torch.ones(256, device=device)
        for _ in range(20):
            dist.all_reduce(small)
        barrier()
        t0 = time.perf_counter()
        works = [dist.all_reduce(small, async_op=True) for _ in range(200)]
        allreduce_host_us = (time.perf_counter() - t0) / 200 * 1e6
        for wk in works:
            wk.wait()
        barrier()

    shares = spec.get("matrix_shares", [spec.get("matrix_share", 0.5)])
    for share in shares:
        n_gemm = max(1, round(target * share / t_gemm)) if share > 0 else 0
        n_pass = max(1, round(target * (1 - share) / t_pass)) if share < 1 else 0
        chunk = max(1, n_gemm // 8), max(1, n_pass // 8)

        def compute():
            with torch.cuda.stream(s_comp):
                g, p = n_gemm, n_pass
                while g > 0 or p > 0:  # interleaved, as a backward pass mixes both kinds
                    gemms(min(max(g, 0), chunk[0]))
                    passes(min(max(p, 0), chunk[1]))
                    g, p = g - chunk[0], p - chunk[1]

        rows = []
        for _ in range(int(spec.get("repeats", 3))):
            t_c = timed(compute)
            t_m = timed(comm)
            t_b = timed(lambda: (compute(), comm()))
            rows.append((t_c, t_m, t_b))
        t_c = stats([r[0] for r in rows])["median"]
        t_m = stats([r[1] for r in rows])["median"]
        t_b = stats([r[2] for r in rows])["median"]
        emit("probe", probe="overlap", world_size=WORLD, matrix_share=share,
             bucket_bytes=bucket * 4, allreduces=n_ar, compute_ms=t_c, comm_ms=t_m, both_ms=t_b,
             hidden=(t_c + t_m - t_b) / t_m if t_m > 0 else None, gemm_tflops=gemm_tflops,
             copy_gbps=copy_gbps, host_probe_us=host_us, allreduce_host_us=allreduce_host_us,
             gpu=torch.cuda.get_device_name(device) if cuda else "cpu")


if __name__ == "__main__":
    sys.exit(main())
