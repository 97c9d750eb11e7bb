"""The PyTorch workloads whose allocation traces vramlab replays: models built from a
config with random weights (nothing is downloaded), inputs drawn from a fixed seed,
so every run allocates the same sequence of sizes.

  transformer  encoder-only language-model training, sequence length varying per step
  gpt2         GPT-2-style generation: varying batch and prompt length, a KV cache that
               grows by one token per step through torch.cat (how naive decoders do it)
  resnet50     torchvision ResNet-50 training (weights=None), batch size varying per step

Each run_*(size, seed) takes size "full" (the traces and peaks) or "tiny" (a small
model and few steps: test fixtures of a few hundred KB) and returns a list of losses
or token sums, to show it really ran.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

WORKLOADS = ("transformer", "gpt2", "resnet50")


def _seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    return random.Random(seed)


# --- transformer training with variable sequence length ---------------------------------

def run_transformer(size="full", seed=1):
    rng = _seed(seed)
    cfg = dict(vocab=8192, d=512, heads=8, layers=6, ff=2048, batch=(16, 32), seq=(64, 512), steps=24)
    if size == "tiny":
        cfg.update(vocab=1024, d=128, heads=4, layers=2, ff=256, batch=(4, 8), seq=(16, 96), steps=4)
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
        tokens = torch.randint(cfg["vocab"], (b, t + 1), device=dev)
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=dev)
        h = model["enc"](model["emb"](tokens[:, :-1]), mask=mask, is_causal=True)
        loss = F.cross_entropy(model["head"](h).flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
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


def run_gpt2(size="full", seed=1):
    rng = _seed(seed)
    # GPT-2 small: 12 layers, 768 wide, 12 heads, 50257 tokens, 1024 positions.
    cfg = dict(vocab=50257, ctx=1024, d=768, heads=12, layers=12, requests=10,
               batch=(1, 2, 4, 8, 16), prompt=(16, 384), new=(32, 160))
    if size == "tiny":
        cfg.update(vocab=2048, ctx=256, d=128, heads=4, layers=2, requests=3, prompt=(8, 64), new=(8, 20))
    dev = "cuda"
    model = _GPT(cfg["vocab"], cfg["ctx"], cfg["d"], cfg["heads"], cfg["layers"]).to(dev, torch.bfloat16).eval()
    sums = []
    with torch.no_grad():
        for _ in range(cfg["requests"]):
            b, p, n = rng.choice(cfg["batch"]), rng.randint(*cfg["prompt"]), rng.randint(*cfg["new"])
            idx = torch.randint(cfg["vocab"], (b, p), device=dev)
            logits, caches = model(idx, 0, [None] * cfg["layers"])
            out = [idx]
            for step in range(n):
                nxt = logits[:, -1].argmax(dim=-1, keepdim=True)
                out.append(nxt)
                logits, caches = model(nxt, p + step, caches)
            sums.append(int(torch.cat(out, dim=1).sum().item()))
            del caches, logits, out
    return sums


# --- ResNet-50 training with variable batch size ------------------------------------------------

def run_resnet50(size="full", seed=1):
    import torchvision

    rng = _seed(seed)
    cfg = dict(batches=(16, 24, 32, 48, 64, 96), image=224, steps=16, classes=1000)
    if size == "tiny":
        cfg.update(batches=(2, 4, 6, 8), image=64, steps=3, classes=100)
    dev = "cuda"
    model = torchvision.models.resnet50(weights=None, num_classes=cfg["classes"]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for _ in range(cfg["steps"]):
        b = rng.choice(cfg["batches"])
        x = torch.randn(b, 3, cfg["image"], cfg["image"], device=dev)
        y = torch.randint(cfg["classes"], (b,), device=dev)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


RUN = dict(transformer=run_transformer, gpt2=run_gpt2, resnet50=run_resnet50)
