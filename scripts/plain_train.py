#!/usr/bin/env python3
"""A plain PyTorch training loop, written apart from scalescope's framework script, to check the
scaling figures against (scripts/scaling-check.sh). It is what a user would write: build the
model, synthetic data on the GPU, bf16 autocast, the optimizer, and time steps with
torch.cuda.synchronize() and the wall clock. One process: the plain model. Under torchrun with
two or more processes: DistributedDataParallel (default bucket size). Gradient accumulation with
no_sync where --accumulate > 1.

Prints one JSON line: the median of the timed blocks' mean step (ms), every block's mean, and the
timed window in Unix seconds (start, end), so that an energy sampler running beside it can take
the mean power over exactly these steps.
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import torch


def build(name):
    if name == "resnet50":
        import torchvision

        model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        loss_fn = torch.nn.CrossEntropyLoss()

        def batch(b):
            x = torch.randn(b, 3, 224, 224, device="cuda").contiguous(
                memory_format=torch.channels_last)
            return x, torch.randint(0, 1000, (b,), device="cuda")

        def loss(m, data):
            return loss_fn(m(data[0]), data[1])

        return model, opt, batch, loss
    import transformers as hf

    if name == "bert-large":
        cfg = hf.BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24,
                            num_attention_heads=16, intermediate_size=4096)
        model, seq = hf.BertForPreTraining(cfg), 128
    elif name == "gpt2-xl":
        cfg = hf.GPT2Config(vocab_size=50257, n_positions=1024, n_embd=1600, n_layer=48,
                            n_head=25)
        model, seq = hf.GPT2LMHeadModel(cfg), 1024
    else:
        raise SystemExit(f"plain_train: unknown model {name}")
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=True)

    def batch(b):
        ids = torch.randint(0, cfg.vocab_size, (b, seq), device="cuda")
        nsp = torch.randint(0, 2, (b,), device="cuda")
        return ids, nsp

    def loss(m, data):
        if name == "bert-large":
            return m(input_ids=data[0], labels=data[0], next_sentence_label=data[1]).loss
        return m(input_ids=data[0], labels=data[0]).loss

    return model, opt, batch, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="resnet50 | bert-large | gpt2-xl")
    ap.add_argument("--micro", type=int, required=True, help="samples per forward/backward")
    ap.add_argument("--accumulate", type=int, default=1)
    ap.add_argument("--warmup-s", type=float, default=5.0)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--block-s", type=float, default=2.0)
    ap.add_argument("--tag", default="", help="echoed in the output line")
    args = ap.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    torch.backends.cudnn.benchmark = True
    if world > 1:
        torch.distributed.init_process_group("nccl", device_id=torch.device("cuda", local))
    model, opt, make_batch, loss_of = build(args.model)
    net = model
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    data = make_batch(args.micro)

    def step():
        opt.zero_grad(set_to_none=True)
        for i in range(args.accumulate):
            last = i == args.accumulate - 1
            ctx = net.no_sync() if (world > 1 and not last) else contextlib.nullcontext()
            with ctx:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = loss_of(net, data)
                loss.backward()
        opt.step()

    def agree(v):
        if world == 1:
            return v
        t = torch.tensor([v], dtype=torch.float64, device="cuda")
        torch.distributed.broadcast(t, 0)
        return t.item()

    start = time.perf_counter()
    done = 0
    while True:
        step()
        done += 1
        torch.cuda.synchronize()
        if not agree(float(done < 3 or time.perf_counter() - start < args.warmup_s)):
            break
    torch.cuda.synchronize()
    t = time.perf_counter()
    step()
    torch.cuda.synchronize()
    per_block = int(agree(float(max(2, round(args.block_s / (time.perf_counter() - t))))))

    means, spans = [], []
    if world > 1:
        torch.distributed.barrier()
    torch.cuda.synchronize()
    w0 = time.time()
    for _ in range(args.blocks):
        t0, b0 = time.perf_counter(), time.time()
        for _ in range(per_block):
            step()
        torch.cuda.synchronize()
        means.append((time.perf_counter() - t0) / per_block * 1e3)
        spans.append([b0, time.time()])
    w1 = time.time()
    if world > 1:
        every = [None] * world
        torch.distributed.all_gather_object(every, means)
        means = [max(r[i] for r in every) for i in range(len(means))]
    if local == 0 and int(os.environ.get("RANK", "0")) == 0:
        print(json.dumps({
            "tag": args.tag, "model": args.model, "world": world, "micro": args.micro,
            "accumulate": args.accumulate, "per_gpu": args.micro * args.accumulate,
            "step_ms": statistics.median(means), "block_ms": means,
            "steps": per_block * args.blocks, "window_t": [w0, w1], "block_t": spans,
        }), flush=True)
    if world > 1:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
