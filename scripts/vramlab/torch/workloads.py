"""The PyTorch workloads whose allocation traces vramlab replays, and the live workloads of
`make torch-bench` (its zoo: vramlab/torch/zoo.py says each one's category, its half and
what varies per step). Models are built from a config with random weights (nothing is
downloaded), inputs drawn from a fixed seed, so every run allocates the same sequence of
sizes.

docs/torch-bench.md, section "vramlab/torch/workloads.py", has the rest."""
import functools
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

WORKLOADS = ("transformer", "gpt2", "resnet50")  # the recorded traces (record_traces.py)


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

    def heads_of(self, x):
        """q, k, v of x (batch, tokens, width), each batch x heads x tokens x head width."""
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        return (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))

    def finish(self, x, y):
        """The block's output from its input x and the attention's output y."""
        b, t, c = x.shape
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))

    def forward(self, x, cache):
        q, k, v = self.heads_of(x)
        if cache is not None:  # the cache grows by t tokens: a new, larger tensor each step
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        return self.finish(x, y), (k, v)


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
    if size == "bench":  # 2-20 new tokens: 22 requests in ~5 s on an H100 (80 new took 1.3 s each)
        cfg.update(requests=22, new=(4, 20))
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

def run_resnet50(size="full", seed=1, on_step=None, repeats=1, fixed=False):
    import torchvision

    rng = _seed(seed)
    cfg = dict(batches=(16, 24, 32, 48, 64, 96), images=(224,), steps=16, classes=1000)
    if size == "tiny":
        cfg.update(batches=(2, 4, 6, 8), images=(64,), steps=3, classes=100)
    if size == "bench":
        cfg.update(batches=(16, 24, 32, 48, 64), images=(128, 160, 192, 224, 256), steps=24)
    if fixed:  # cnn-fixed: one shape every step
        cfg.update(batches=(6,), images=(64,)) if size == "tiny" else cfg.update(batches=(32,), images=(224,))
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



# --- the zoo's workloads (vramlab/torch/zoo.py): sizes "bench" and "tiny" ----------------------------

def _pick(cfg, size):
    """cfg's "bench" settings, or its "tiny" ones (cfg["tiny"]) merged over them."""
    out = {k: v for k, v in cfg.items() if k != "tiny"}
    if size == "tiny":
        out.update(cfg["tiny"])
    return out


class _LM(nn.Module):
    """A GPT-style decoder for training (the blocks of _GPT): logits of every position.
    checkpointed: each block's activations are recomputed in the backward pass."""

    def __init__(self, vocab, ctx, d, heads, layers, checkpointed=False):
        super().__init__()
        self.checkpointed = checkpointed
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        if self.checkpointed:
            from torch.utils.checkpoint import checkpoint  # here: only ckpt pays for its import
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            if self.checkpointed:
                x = checkpoint(_block_output, blk, x, use_reentrant=False)
            else:
                x = _block_output(blk, x)
        return self.head(self.ln(x))


def _block_output(blk, x):
    return blk(x, None)[0]


def _lm_loss(model, tokens):
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())


def run_ckpt(size="bench", seed=1, on_step=None, repeats=1):
    """GPT-style training, every block checkpointed, batch and sequence length per step."""
    rng = _seed(seed)
    cfg = _pick(dict(vocab=16384, ctx=1024, d=768, heads=12, layers=8, batch=(4, 12), seq=(128, 1024), steps=30,
                     tiny=dict(vocab=512, ctx=64, d=64, heads=4, layers=2, batch=(2, 4), seq=(8, 63), steps=6)), size)
    with torch.device("cuda"):
        model = _LM(cfg["vocab"], cfg["ctx"], cfg["d"], cfg["heads"], cfg["layers"], checkpointed=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        b, t = rng.randint(*cfg["batch"]), rng.randint(*cfg["seq"])
        for _r in range(repeats):
            tokens = torch.randint(cfg["vocab"], (b, t + 1), device="cuda")
            _train_step(opt, _lm_loss(model, tokens), losses, on_step)
    return losses


def run_lm_fixed(size="bench", seed=1, on_step=None, repeats=1):
    """GPT-style training at one shape in bf16 autocast; the weights and AdamW's state stay
    fp32 (the master copy)."""
    _seed(seed)
    cfg = _pick(dict(vocab=32000, ctx=512, d=768, heads=12, layers=8, batch=16, seq=512, steps=40,
                     tiny=dict(vocab=512, ctx=32, d=64, heads=4, layers=2, batch=4, seq=32, steps=6)), size)
    with torch.device("cuda"):
        model = _LM(cfg["vocab"], cfg["ctx"], cfg["d"], cfg["heads"], cfg["layers"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        for _r in range(repeats):
            tokens = torch.randint(cfg["vocab"], (cfg["batch"], cfg["seq"]), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = _lm_loss(model, tokens)
            _train_step(opt, loss, losses, on_step)
    return losses


class _Tagger(nn.Module):
    """Sequence tagging: embedding, bidirectional LSTM over the packed sentences, a tag
    per token."""

    def __init__(self, vocab, emb, hidden, layers, tags):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, layers, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.emb(tokens), lengths, batch_first=True,
                                                   enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=tokens.shape[1])
        return self.out(h)


def run_lstm(size="bench", seed=1, on_step=None, repeats=1, fixed=False):
    """A bidirectional LSTM tagger: a random batch of sentences, each of a random length
    (fixed: one batch of sentences of one length, lstm-fixed)."""
    rng = _seed(seed)
    cfg = _pick(dict(vocab=20000, emb=256, hidden=512, layers=2, tags=48, batch=(32, 96), length=(8, 120),
                     steps=40,
                     tiny=dict(vocab=500, emb=32, hidden=64, layers=1, tags=8, batch=(4, 8), length=(3, 20),
                               steps=6)), size)
    if fixed:  # lstm-fixed: one shape every step
        cfg.update(batch=(6, 6), length=(12, 12)) if size == "tiny" else cfg.update(batch=(64, 64), length=(64, 64))
    with torch.device("cuda"):
        model = _Tagger(cfg["vocab"], cfg["emb"], cfg["hidden"], cfg["layers"], cfg["tags"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(cfg["steps"]):
        lengths = [rng.randint(*cfg["length"]) for _ in range(rng.randint(*cfg["batch"]))]
        t = max(lengths)
        for _r in range(repeats):
            pad = torch.arange(t, device="cuda")[None, :] >= torch.tensor(lengths, device="cuda")[:, None]
            tokens = torch.randint(1, cfg["vocab"], (len(lengths), t), device="cuda").masked_fill_(pad, 0)
            tags = torch.randint(cfg["tags"], (len(lengths), t), device="cuda").masked_fill_(pad, -100)
            logits = model(tokens, torch.tensor(lengths))  # pack_padded_sequence wants lengths on the CPU
            loss = F.cross_entropy(logits.flatten(0, 1), tags.flatten(), ignore_index=-100)
            _train_step(opt, loss, losses, on_step)
    return losses


def _conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class _UNet(nn.Module):
    """U-Net: conv blocks at halving resolutions, transposed convs back up, skip
    connections concatenated. Average pooling down (max pooling's backward uses atomics)."""

    def __init__(self, classes, widths):
        super().__init__()
        self.down = nn.ModuleList(_conv_block(cin, cout) for cin, cout in zip((3,) + widths[:-1], widths))
        back = widths[::-1]
        self.up = nn.ModuleList(nn.ConvTranspose2d(cin, cout, 2, stride=2) for cin, cout in zip(back, back[1:]))
        self.dec = nn.ModuleList(_conv_block(2 * c, c) for c in back[1:])
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(F.avg_pool2d(x, 2) if i else x)
            skips.append(x)
        skips.pop()
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def run_unet(size="bench", seed=1, on_step=None, repeats=1, fixed=False):
    """U-Net segmentation training: a random batch at a random resolution each step (fixed:
    one batch at one resolution, unet-fixed)."""
    rng = _seed(seed)
    cfg = _pick(dict(widths=(32, 64, 128, 256), classes=8, batch=(4, 16), images=tuple(range(96, 321, 32)),
                     steps=40,
                     tiny=dict(widths=(8, 16), classes=4, batch=(1, 3), images=(16, 24, 32), steps=6)), size)
    if fixed:  # unet-fixed: one shape every step
        cfg.update(batch=(2, 2), images=(24,)) if size == "tiny" else cfg.update(batch=(12, 12), images=(224,))
    with torch.device("cuda"):
        model = _UNet(cfg["classes"], cfg["widths"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for _ in range(cfg["steps"]):
        b, im = rng.randint(*cfg["batch"]), rng.choice(cfg["images"])
        for _r in range(repeats):
            x = torch.randn(b, 3, im, im, device="cuda")
            y = torch.randint(cfg["classes"], (b, im, im), device="cuda")
            # per pixel, as rows: the 2-d loss kernel (images x classes x pixels) sums with atomics
            logits = model(x).permute(0, 2, 3, 1).reshape(-1, cfg["classes"])
            _train_step(opt, F.cross_entropy(logits, y.flatten()), losses, on_step)
    return losses


def _resize_matrix(n_from, n_to, device):
    """n_to x n_from: linear interpolation as a matrix. Applied by matmul, so the backward
    pass is deterministic (F.interpolate's CUDA backward uses atomics)."""
    eye = torch.eye(n_from, device=device)[None]
    return F.interpolate(eye, size=n_to, mode="linear", align_corners=False)[0].t()


class _ViT(nn.Module):
    """Vision transformer: patch embedding, a class token, learned position embedding on a
    grid x grid table resized to each image's patch grid."""

    def __init__(self, patch, d, heads, layers, classes, grid):
        super().__init__()
        self.embed = nn.Conv2d(3, d, patch, stride=patch)
        self.pos = nn.Parameter(torch.randn(d, grid, grid) * 0.02)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.embed(x)  # batch, d, rows, columns of patches
        g = self.pos.shape[1]
        pos = _resize_matrix(g, x.shape[2], x.device) @ self.pos @ _resize_matrix(g, x.shape[3], x.device).t()
        x = (x + pos).flatten(2).transpose(1, 2)
        x = self.enc(torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1))
        return self.head(self.norm(x[:, 0]))


def run_vit(size="bench", seed=1, on_step=None, repeats=1, fixed=False):
    """ViT classification training: a random batch at a random image size each step (fixed:
    one batch at one size, vit-fixed)."""
    rng = _seed(seed)
    cfg = _pick(dict(patch=16, d=384, heads=6, layers=6, classes=100, grid=14, batch=(16, 64),
                     images=tuple(range(96, 321, 16)), steps=40,
                     tiny=dict(patch=8, d=32, heads=2, layers=2, classes=10, grid=4, batch=(2, 4),
                               images=(16, 24, 32, 40), steps=6)), size)
    if fixed:  # vit-fixed: one shape every step
        cfg.update(batch=(3, 3), images=(16,)) if size == "tiny" else cfg.update(batch=(48, 48), images=(224,))
    with torch.device("cuda"):
        model = _ViT(cfg["patch"], cfg["d"], cfg["heads"], cfg["layers"], cfg["classes"], cfg["grid"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        b, im = rng.randint(*cfg["batch"]), rng.choice(cfg["images"])
        for _r in range(repeats):
            x = torch.randn(b, 3, im, im, device="cuda")
            y = torch.randint(cfg["classes"], (b,), device="cuda")
            _train_step(opt, F.cross_entropy(model(x), y), losses, on_step)
    return losses


class _Classifier(nn.Module):
    """Token embedding, a transformer encoder, mean pooling, a linear head."""

    def __init__(self, vocab, d, heads, layers, classes):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, tokens):
        return self.head(self.enc(self.emb(tokens)).mean(dim=1))


def run_accum(size="bench", seed=1, on_step=None, repeats=1):
    """Gradient accumulation: each optimizer step sums the gradients of 4 micro-batches,
    each of a random batch and length; the gradients live across them."""
    rng = _seed(seed)
    cfg = _pick(dict(vocab=16384, d=512, heads=8, layers=6, classes=10, micro=4, batch=(8, 32), seq=(32, 256),
                     steps=30,
                     tiny=dict(vocab=512, d=32, heads=2, layers=2, micro=2, batch=(2, 4), seq=(4, 16), steps=6)),
                size)
    with torch.device("cuda"):
        model = _Classifier(cfg["vocab"], cfg["d"], cfg["heads"], cfg["layers"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        shapes = [(rng.randint(*cfg["batch"]), rng.randint(*cfg["seq"])) for _ in range(cfg["micro"])]
        for _r in range(repeats):
            total = 0.0
            for b, t in shapes:
                tokens = torch.randint(cfg["vocab"], (b, t), device="cuda")
                y = torch.randint(cfg["classes"], (b,), device="cuda")
                loss = F.cross_entropy(model(tokens), y) / cfg["micro"]
                loss.backward()
                total += loss.item()
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(total)
            _done(on_step, len(losses) - 1)
    return losses


def run_serve(size="bench", seed=1, on_step=None, repeats=1):
    """A BERT-base-sized encoder in bf16 serving requests under torch.inference_mode: a
    random batch of sequences, each of a random length, padded to the longest with a
    padding mask (PyTorch's fast path packs them into a nested tensor)."""
    rng = _seed(seed)
    cfg = _pick(dict(vocab=30522, d=768, heads=12, layers=12, batch=(1, 2, 4, 8, 16, 32, 64), length=(16, 512),
                     steps=100,
                     tiny=dict(vocab=512, d=32, heads=2, layers=2, batch=(1, 2, 4), length=(4, 32), steps=6)), size)
    with torch.device("cuda"):
        emb = nn.Embedding(cfg["vocab"], cfg["d"])
        layer = nn.TransformerEncoderLayer(cfg["d"], cfg["heads"], 4 * cfg["d"], batch_first=True)
        enc = nn.TransformerEncoder(layer, cfg["layers"])
    emb, enc = emb.to(torch.bfloat16).eval(), enc.to(torch.bfloat16).eval()
    sums = []
    with torch.inference_mode():
        for _ in range(cfg["steps"]):
            lengths = [rng.randint(*cfg["length"]) for _ in range(rng.choice(cfg["batch"]))]
            t = max(lengths)
            for _r in range(repeats):
                lens = torch.tensor(lengths, device="cuda")
                pad = torch.arange(t, device="cuda")[None, :] >= lens[:, None]
                tokens = torch.randint(cfg["vocab"], (len(lengths), t), device="cuda")
                h = enc(emb(tokens), src_key_padding_mask=pad).masked_fill(pad[..., None], 0)
                pooled = h.float().sum(dim=1) / lens[:, None]
                sums.append(pooled.sum().item())
                _done(on_step, len(sums) - 1)
    return sums


class _StaticGPT(_GPT):
    """_GPT decoding into a cache preallocated for the whole request (prompt and new
    tokens): each step writes its keys and values in place and attends to the filled
    part, as static-cache decoders do."""

    def forward(self, idx, start, caches):
        pos = torch.arange(start, start + idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk, (ck, cv) in zip(self.blocks, caches):
            q, k, v = blk.heads_of(x)
            end = start + idx.shape[1]
            ck[:, :, start:end], cv[:, :, start:end] = k, v
            y = F.scaled_dot_product_attention(q, ck[:, :, :end], cv[:, :, :end], is_causal=start == 0)
            x = blk.finish(x, y)
        return self.head(self.ln(x[:, -1:]))


def run_kv_static(size="bench", seed=1, on_step=None, repeats=1):
    """Generation in bf16 with a KV cache allocated per request for prompt + new tokens
    (batch, prompt and new tokens random per request): one step is a request."""
    rng = _seed(seed)
    cfg = _pick(dict(vocab=32000, ctx=1024, d=1024, heads=16, layers=8, requests=30, batch=(1, 2, 4, 8, 16),
                     prompt=(16, 512), new=(8, 40),
                     tiny=dict(vocab=512, ctx=64, d=64, heads=4, layers=2, requests=5, batch=(1, 2, 3),
                               prompt=(4, 24), new=(2, 8))), size)
    with torch.device("cuda"):
        model = _StaticGPT(cfg["vocab"], cfg["ctx"], cfg["d"], cfg["heads"], cfg["layers"])
    model = model.to(torch.bfloat16).eval()
    hd = cfg["d"] // cfg["heads"]
    sums = []
    with torch.no_grad():
        for _ in range(cfg["requests"]):
            b, p, n = rng.choice(cfg["batch"]), rng.randint(*cfg["prompt"]), rng.randint(*cfg["new"])
            for _r in range(repeats):
                caches = [tuple(torch.empty(b, cfg["heads"], p + n, hd, device="cuda", dtype=torch.bfloat16)
                                for _kv in range(2)) for _layer in range(cfg["layers"])]
                idx = torch.randint(cfg["vocab"], (b, p), device="cuda")
                logits, out = model(idx, 0, caches), [idx]
                for step in range(n):
                    nxt = logits[:, -1].argmax(dim=-1, keepdim=True)
                    out.append(nxt)
                    logits = model(nxt, p + step, caches)
                sums.append(int(torch.cat(out, dim=1).sum().item()))
                del caches, logits, out
                _done(on_step, len(sums) - 1)
    return sums


def run_big(size="bench", seed=1, on_step=None, repeats=1):
    """A model larger than half the GPU: a frozen backbone of residual MLP blocks whose bf16
    weights take ~55% of the device's memory (size "bench"; a few MB at "tiny"), run
    without gradients, and a trained fp32 classifier head on its features. Tokens per step
    (batch x length) random."""
    rng = _seed(seed)
    cfg = _pick(dict(d=8192, share=0.55, layers=None, classes=1000, batch=(1, 2, 4, 8), seq=(128, 256), steps=30,
                     tiny=dict(d=128, layers=3, classes=10, batch=(1, 2), seq=(4, 16), steps=6)), size)
    d = cfg["d"]
    layer_bytes = 2 * (4 * d * d) * 2  # two bf16 matrices, d x 4d and 4d x d
    layers = cfg["layers"] or max(1, int(cfg["share"] * torch.cuda.mem_get_info()[1] / layer_bytes))
    weights = []
    for _ in range(layers):  # one tensor per matrix, as a checkpoint's loader makes them
        w1 = torch.empty(4 * d, d, device="cuda", dtype=torch.bfloat16).normal_(0, d ** -0.5)
        w2 = torch.empty(d, 4 * d, device="cuda", dtype=torch.bfloat16).normal_(0, (4 * d) ** -0.5)
        weights.append((w1, w2))
    with torch.device("cuda"):
        head = nn.Linear(d, cfg["classes"])
    opt = torch.optim.AdamW(head.parameters(), lr=1e-4)
    losses = []
    for _ in range(cfg["steps"]):
        b, t = rng.choice(cfg["batch"]), rng.randint(*cfg["seq"])
        for _r in range(repeats):
            x = torch.randn(b, t, d, device="cuda", dtype=torch.bfloat16)
            with torch.no_grad():
                for w1, w2 in weights:
                    x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (d,)), w1)), w2)
            y = torch.randint(cfg["classes"], (b * t,), device="cuda")
            loss = F.cross_entropy(head(x.flatten(0, 1).float()), y)
            _train_step(opt, loss, losses, on_step)
    return losses


RUN = {"transformer": run_transformer, "gpt2": run_gpt2, "resnet50": run_resnet50, "moe": run_moe,
       "lstm": run_lstm, "ckpt": run_ckpt, "lm-fixed": run_lm_fixed, "unet": run_unet, "vit": run_vit,
       "accum": run_accum, "serve": run_serve, "kv-static": run_kv_static, "big": run_big,
       # outside the zoo (zoo.EXTRAS), one shape every step: to confirm plan=1 on repeating programs
       "cnn-fixed": functools.partial(run_resnet50, fixed=True), "vit-fixed": functools.partial(run_vit, fixed=True),
       "unet-fixed": functools.partial(run_unet, fixed=True), "lstm-fixed": functools.partial(run_lstm, fixed=True)}
