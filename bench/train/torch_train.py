#!/usr/bin/python3
"""The reference for bench/train: the same GPT trained by PyTorch on the CPU.

usage: torch_train.py LAYERS HEADS CHANNELS SEQ BATCH STEPS THREADS

The model is tests/weight_stream/gpt_torch.py's (the one wafer's gradients
are checked against), initialised as wafer initialises it, trained on random
bytes with AdamW (betas 0.9/0.95, weight decay 0.1, clipping at 1.0) on
THREADS threads. Prints the tokens/s of STEPS steps after 3 warm-up steps.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "weight_stream"))
import torch  # noqa: E402
from gpt_torch import forward, shapes  # noqa: E402


def main():
    L, NH, C, T, B, steps, threads = (int(a) for a in sys.argv[1:8])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    params = {}
    for name, shape in shapes(256, T, L, C):
        if name.endswith("b"):
            t = torch.zeros(shape)
        elif name in ("ln1w", "ln2w", "lnfw"):
            t = torch.ones(shape)
        else:
            t = torch.randn(shape) * 0.02
        params[name] = t.requires_grad_()
    opt = torch.optim.AdamW(params.values(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)

    def step():
        tokens = torch.randint(0, 256, (B, T))
        targets = torch.randint(0, 256, (B, T))
        opt.zero_grad(set_to_none=True)
        loss = forward(params, tokens, targets, NH)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params.values(), 1.0)
        opt.step()

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    print("%.1f" % (steps * B * T / (time.perf_counter() - t0)))


if __name__ == "__main__":
    main()
