#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""PyTorch eager peer for `transformer-studio-cli lm-train`: the same small character-level GPT
(the shakespeare-char preset: batch 16, block 32, 4 layers, 4 heads, n_embd 64, dropout 0, AdamW
lr 1e-3) trained on the same text, so tokens/s and val loss can be compared with ours.

Usage: /usr/bin/python3 bench/lm_peer.py --text input.txt [--steps 500] [--threads 2] [--eval-iters 200]
Prints one line: steps, tokens/s (training only) and the final train/val loss estimates.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """Pre-LN: x + attn(ln1(x)), then x + ff(ln2(x)); fused QKV as in our MultiHeadAttention."""

    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        split = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + mask[:t, :t]
        att = self.drop(scores.softmax(-1)) @ v
        x = x + self.drop(self.out(att.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.ff(self.norm2(x)))


class Gpt(nn.Module):
    def __init__(self, vocab, block, layers, heads, d, dropout):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("mask", torch.full((block, block), float("-inf")).triu(1))

    def forward(self, idx):
        x = self.drop(self.tok(idx) + self.pos(torch.arange(idx.shape[1])))
        for b in self.blocks:
            x = b(x, self.mask)
        return self.head(self.norm(x))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--text", required=True)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--eval-iters", type=int, default=200)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--block", type=int, default=32)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--embd", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1337)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    text = open(a.text, encoding="utf-8").read().replace("\r\n", "\n")
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([index[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}

    def batch(split):
        d = splits[split]
        starts = torch.randint(len(d) - a.block, (a.batch, 1))
        window = starts + torch.arange(a.block)
        return d[window], d[window + 1]

    model = Gpt(len(chars), a.block, a.layers, a.heads, a.embd, a.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr)
    train_seconds = 0.0
    for _ in range(a.steps):
        t0 = time.perf_counter()
        x, y = batch("train")
        loss = F.cross_entropy(model(x).view(-1, len(chars)), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        train_seconds += time.perf_counter() - t0

    model.eval()
    losses = {}
    with torch.no_grad():
        for split in ("train", "val"):
            total = 0.0
            for _ in range(a.eval_iters):
                x, y = batch(split)
                total += F.cross_entropy(model(x).view(-1, len(chars)), y.view(-1)).item()
            losses[split] = total / a.eval_iters
    tokens_per_s = a.steps * a.batch * a.block / train_seconds if train_seconds > 0 else 0
    print(f"pytorch-eager: {a.steps} steps, {tokens_per_s:.0f} tok/s, "
          f"train loss {losses['train']:.4f}, val loss {losses['val']:.4f}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, {torch.get_num_threads()} threads")


if __name__ == "__main__":
    main()
