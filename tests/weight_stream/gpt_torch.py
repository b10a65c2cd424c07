#!/usr/bin/python3
"""wafer's GPT against PyTorch, as llm.c checks itself.

usage: gpt_torch.py DIR     (DIR written by gpt_dump)

Loads the parameters and the batch into an equivalent torch model (same
layout: token and position embeddings, pre-LayerNorm blocks of causal
multi-head attention and a tanh-GELU MLP, final LayerNorm, LM head tied to
the token embedding), then checks the loss to 1e-5 relative, every
parameter tensor's gradient and, after torch's AdamW step with gradient
clipping, every updated tensor to 1e-4 of the tensor's largest value.
Exit 0 when all agree, 1 otherwise, 77 when torch is not installed.
"""
import math
import sys

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("gpt_torch.py: PyTorch (Debian's python3-torch) is not installed: skipped")
    sys.exit(77)


def shapes(V, T, L, C):
    return [("wte", (V, C)), ("wpe", (T, C)), ("ln1w", (L, C)), ("ln1b", (L, C)),
            ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)), ("attprojw", (L, C, C)),
            ("attprojb", (L, C)), ("ln2w", (L, C)), ("ln2b", (L, C)), ("fcw", (L, 4 * C, C)),
            ("fcb", (L, 4 * C)), ("fcprojw", (L, C, 4 * C)), ("fcprojb", (L, C)),
            ("lnfw", (C,)), ("lnfb", (C,))]


def split(flat, layout):
    out, at = {}, 0
    for name, shape in layout:
        n = int(np.prod(shape))
        out[name] = flat[at:at + n].reshape(shape)
        at += n
    assert at == flat.size, "buffer size %d, layout %d" % (flat.size, at)
    return out


def forward(p, tokens, targets, NH, relu=False):
    B, T = tokens.shape
    C = p["wte"].shape[1]
    hs = C // NH
    x = p["wte"][tokens] + p["wpe"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(p["ln1w"].shape[0]):
        h = F.layer_norm(x, (C,), p["ln1w"][l], p["ln1b"][l], 1e-5)
        q, k, v = F.linear(h, p["qkvw"][l], p["qkvb"][l]).split(C, dim=2)
        q, k, v = (z.view(B, T, NH, hs).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + F.linear(y, p["attprojw"][l], p["attprojb"][l])
        h = F.layer_norm(x, (C,), p["ln2w"][l], p["ln2b"][l], 1e-5)
        h = F.linear(h, p["fcw"][l], p["fcb"][l])
        h = F.relu(h) if relu else F.gelu(h, approximate="tanh")
        x = x + F.linear(h, p["fcprojw"][l], p["fcprojb"][l])
    x = F.layer_norm(x, (C,), p["lnfw"], p["lnfb"], 1e-5)
    logits = x @ p["wte"].t()
    return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1))


def main():
    d = sys.argv[1]
    meta = {k: float(v) for k, v in (line.split() for line in open(d + "/meta.txt"))}
    V, T, L, NH, C, B = (int(meta[k]) for k in ("vocab", "seq", "layers", "heads", "channels", "batch"))
    layout = shapes(V, T, L, C)
    load = lambda name: np.fromfile("%s/%s" % (d, name), dtype=np.float32)
    params = {k: torch.tensor(v, requires_grad=True) for k, v in split(load("params.f32"), layout).items()}
    grads, updated = split(load("grads.f32"), layout), split(load("updated.f32"), layout)
    tokens = torch.tensor(np.fromfile(d + "/tokens.i32", dtype=np.int32).reshape(B, T), dtype=torch.long)
    targets = torch.tensor(np.fromfile(d + "/targets.i32", dtype=np.int32).reshape(B, T), dtype=torch.long)

    failures = 0
    loss = forward(params, tokens, targets, NH, meta.get("relu", 0) != 0)
    rel = abs(loss.item() - meta["loss"]) / abs(loss.item())
    print("loss: wafer %.7f, torch %.7f, relative difference %.2e" % (meta["loss"], loss.item(), rel))
    failures += rel > 1e-5
    loss.backward()
    for name, _ in layout:
        g = params[name].grad.numpy()
        diff = np.abs(g - grads[name]).max() / max(np.abs(g).max(), 1e-30)
        if diff > 1e-4:
            print("gradient of %s differs by %.2e of its largest value" % (name, diff))
            failures += 1
    order = [params[name] for name, _ in layout]
    norm = torch.nn.utils.clip_grad_norm_(order, meta["clip"])
    failures += abs(norm.item() - meta["norm"]) > 1e-4 * norm.item()
    opt = torch.optim.AdamW(order, lr=meta["lr"], betas=(meta["beta1"], meta["beta2"]),
                            eps=meta["eps"], weight_decay=meta["weight_decay"])
    opt.step()
    for name, _ in layout:
        p = params[name].detach().numpy()
        diff = np.abs(p - updated[name]).max() / max(np.abs(p).max(), 1e-30)
        if diff > 1e-4:
            print("AdamW update of %s differs by %.2e of its largest value" % (name, diff))
            failures += 1
    print("gradient norm: wafer %.6g, torch %.6g; %d tensors checked: %s" %
          (meta["norm"], norm.item(), len(layout), "agree" if not failures else "%d differ" % failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
