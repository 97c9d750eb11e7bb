"""The PyTorch workloads whose allocation traces vramlab replays: models built from a
config with random weights (nothing is downloaded), inputs drawn from a fixed seed,
so every run allocates the same sequence of sizes.

  transformer  encoder-only language-model training, sequence length varying per step
  gpt2         GPT-2-style generation: varying batch and prompt length, a KV cache that
               grows by one token per step through torch.cat (how naive decoders do it)
  resnet50     torchvision ResNet-50 training (weights=None), batch size varying per step
               (size "bench": image size too)
  moe          mixture-of-experts language-model training (size "bench" or "tiny"):
               top-2 routing, so every expert sees a different number of tokens each step

Each run_*(size, seed, on_step=None) takes size "full" (the traces and peaks), "tiny"
(a small model and few steps: test fixtures of a few hundred KB) or "bench" (the live
benchmark, scripts/torch/bench.py: sized for ~10 s a process on an H100) and returns a
list of losses or token sums, to show it really ran. on_step(i), when given, is called
after step (or request) i: the benchmark times steps with it. repeats=2 runs every step
(or request) twice with the same shapes, one result and one on_step call each: the
benchmark's in-process pairs serve one of the two with each allocator, so that the two
are compared on equal work (the steps' sizes vary).
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

WORKLOADS = ("transformer", "gpt2", "resnet50")
BENCH_WORKLOADS = ("transformer", "resnet50", "gpt2", "moe")


def _seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    return random.Random(seed)


# --- transformer training with variable sequence length ---------------------------------

def _done(on_step, i):
    if on_step is not None:
        on_step(i)


def _train_step(opt, loss, losses, on_step):
    """The end of every training step (transformer, resnet50, moe): backward, update,
    keep the loss and tell on_step."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    _done(on_step, len(losses) - 1)


def run_transformer(size="full", seed=1, on_step=None, repeats=1):
    rng = _seed(seed)
    cfg = dict(vocab=8192, d=512, heads=8, layers=6, ff=2048, batch=(16, 32), seq=(64, 512), steps=24)
    if size == "tiny":
        cfg.update(vocab=1024, d=128, heads=4, layers=2, ff=256, batch=(4, 8), seq=(16, 96), steps=4)
    if size == "bench":
        cfg.update(steps=40)
    dev = "cuda"
    emb = nn.Embedding(cfg["vocab"], cfg["d"])
    layer = nn.TransformerEncoderLayer(cfg["d"], cfg["heads"], cfg["ff"], dropout=0.1, batch_first=True)
    enc = nn.TransformerEncoder(layer, cfg["layers"], enable_nested_tensor=False)
    head = nn.Linear(cfg["d"], cfg["vocab"])
    model = nn.ModuleDict(dict(emb=emb, enc=enc, head=head)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        b, t = rng.randint(*cfg["batch"]), rng.randint(*cfg["seq"])
        for _r in range(repeats):
            tokens = torch.randint(cfg["vocab"], (b, t + 1), device=dev)
            mask = nn.Transformer.generate_square_subsequent_mask(t, device=dev)
            h = model["enc"](model["emb"](tokens[:, :-1]), mask=mask, is_causal=True)
            loss = F.cross_entropy(model["head"](h).flatten(0, 1), tokens[:, 1:].flatten())
            _train_step(opt, loss, losses, on_step)
    return losses


# --- GPT-2-style generation with a growing KV cache -----------------------------------------

class _Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, cache):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        if cache is not None:  # the cache grows by t tokens: a new, larger tensor each step
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return x, (k, v)


class _GPT(nn.Module):
    def __init__(self, vocab, ctx, d, heads, layers):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, start, caches):
        pos = torch.arange(start, start + idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        new = []
        for blk, cache in zip(self.blocks, caches):
            x, kv = blk(x, cache)
            new.append(kv)
        return self.head(self.ln(x[:, -1:])), new


def run_gpt2(size="full", seed=1, on_step=None, repeats=1):
    rng = _seed(seed)
    # GPT-2 small: 12 layers, 768 wide, 12 heads, 50257 tokens, 1024 positions.
    cfg = dict(vocab=50257, ctx=1024, d=768, heads=12, layers=12, requests=10,
               batch=(1, 2, 4, 8, 16), prompt=(16, 384), new=(32, 160))
    if size == "tiny":
        cfg.update(vocab=2048, ctx=256, d=128, heads=4, layers=2, requests=3, prompt=(8, 64), new=(8, 20))
    if size == "bench":
        cfg.update(requests=14, new=(32, 128))
    dev = "cuda"
    model = _GPT(cfg["vocab"], cfg["ctx"], cfg["d"], cfg["heads"], cfg["layers"]).to(dev, torch.bfloat16).eval()
    sums = []
    with torch.no_grad():
        for _ in range(cfg["requests"]):
            b, p, n = rng.choice(cfg["batch"]), rng.randint(*cfg["prompt"]), rng.randint(*cfg["new"])
            for _r in range(repeats):
                idx = torch.randint(cfg["vocab"], (b, p), device=dev)
                logits, caches = model(idx, 0, [None] * cfg["layers"])
                out = [idx]
                for step in range(n):
                    nxt = logits[:, -1].argmax(dim=-1, keepdim=True)
                    out.append(nxt)
                    logits, caches = model(nxt, p + step, caches)
                sums.append(int(torch.cat(out, dim=1).sum().item()))
                del caches, logits, out
                _done(on_step, len(sums) - 1)
    return sums


# --- ResNet-50 training with variable batch size (and image size) ------------------------------

def run_resnet50(size="full", seed=1, on_step=None, repeats=1):
    import torchvision

    rng = _seed(seed)
    cfg = dict(batches=(16, 24, 32, 48, 64, 96), images=(224,), steps=16, classes=1000)
    if size == "tiny":
        cfg.update(batches=(2, 4, 6, 8), images=(64,), steps=3, classes=100)
    if size == "bench":
        cfg.update(batches=(16, 24, 32, 48, 64), images=(128, 160, 192, 224, 256), steps=24)
    dev = "cuda"
    model = torchvision.models.resnet50(weights=None, num_classes=cfg["classes"]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for _ in range(cfg["steps"]):
        b = rng.choice(cfg["batches"])
        # one image size: no draw, so the "full" and "tiny" sequences stay as recorded
        im = rng.choice(cfg["images"]) if len(cfg["images"]) > 1 else cfg["images"][0]
        for _r in range(repeats):
            x = torch.randn(b, 3, im, im, device=dev)
            y = torch.randint(cfg["classes"], (b,), device=dev)
            loss = F.cross_entropy(model(x), y)
            _train_step(opt, loss, losses, on_step)
    return losses


# --- mixture-of-experts training: token routing varies per step --------------------------------

class _MoE(nn.Module):
    """Top-k routing without capacity limits: tokens sorted by expert, each expert runs on
    its own slice (a different size every step), outputs weighted and added back in
    token order. No atomics (index_add_ is deterministic under deterministic algorithms)."""

    def __init__(self, d, ff, experts, k):
        super().__init__()
        self.k = k
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
                                     for _ in range(experts))

    def forward(self, x):  # x: tokens, d
        weight, expert = F.softmax(self.router(x), dim=-1).topk(self.k, dim=-1)
        expert, weight = expert.flatten(), (weight / weight.sum(-1, keepdim=True)).flatten()
        order = torch.argsort(expert, stable=True)
        counts = torch.bincount(expert, minlength=len(self.experts)).tolist()
        token = order // self.k
        chunks = x.index_select(0, token).split(counts)
        y = torch.cat([e(c) for e, c in zip(self.experts, chunks)]) * weight[order, None]
        return torch.zeros_like(x).index_add(0, token, y)


def run_moe(size="bench", seed=1, on_step=None, repeats=1):
    rng = _seed(seed)
    cfg = dict(vocab=8192, d=768, ff=2048, experts=8, k=2, layers=4, batch=(4, 16), seq=(64, 512), steps=30)
    if size == "tiny":
        cfg.update(vocab=1024, d=128, ff=256, experts=4, layers=2, batch=(2, 4), seq=(16, 64), steps=4)
    dev = "cuda"
    model = nn.ModuleDict(dict(
        emb=nn.Embedding(cfg["vocab"], cfg["d"]),
        norms=nn.ModuleList(nn.LayerNorm(cfg["d"]) for _ in range(cfg["layers"])),
        moes=nn.ModuleList(_MoE(cfg["d"], cfg["ff"], cfg["experts"], cfg["k"]) for _ in range(cfg["layers"])),
        head=nn.Linear(cfg["d"], cfg["vocab"]),
    )).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        b, t = rng.randint(*cfg["batch"]), rng.randint(*cfg["seq"])
        for _r in range(repeats):
            tokens = torch.randint(cfg["vocab"], (b, t + 1), device=dev)
            h = model["emb"](tokens[:, :-1]).flatten(0, 1)
            for norm, moe in zip(model["norms"], model["moes"]):
                h = h + moe(norm(h))
            loss = F.cross_entropy(model["head"](h), tokens[:, 1:].flatten())
            _train_step(opt, loss, losses, on_step)
    return losses


RUN = dict(transformer=run_transformer, gpt2=run_gpt2, resnet50=run_resnet50, moe=run_moe)
