#!/usr/bin/env python3
"""GPU test: a few real PyTorch training steps give bit-identical losses and weights
on vramlab's allocator (libvramlab_caching.so through CUDAPluggableAllocator) and on
PyTorch's own, each in its own process (an allocator is chosen once per process); the
three processes run at the same time on the one GPU, since each one's results depend on
its own deterministic work alone, not on timing.

  torch_training_equal.py PLUGIN_SO        the test: runs the workers, compares
  torch_training_equal.py --worker [SO]    one training run; prints a JSON line

Deterministic settings (fixed seed, deterministic algorithms, no cuDNN autotuning,
a fixed cuBLAS workspace) make equal results the expected outcome: any difference
means the allocator handed out memory that someone else was still using, or lost data.
Exit: 0 equal, 1 different or a worker failed, 77 (one line) without torch or a GPU.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "scripts"))  # the vramlab package
from vramlab.torch import gpu_check  # noqa: E402  (the skip check shared with the torch-bench)

SPECS = ("caching", "caching:segments=expandable")


def train(plugin):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    if plugin:
        alloc = torch.cuda.memory.CUDAPluggableAllocator(plugin, "vl_alloc", "vl_free")
        torch.cuda.memory.change_current_allocator(alloc)
    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True)
    # Attention through plain matmul + softmax: the fused kernels' backward passes
    # accumulate with atomics, so they are not reproducible run to run.
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    torch.backends.cuda.enable_cudnn_sdp(False)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"

    # A small CNN and a transformer layer: convolutions, matmuls, attention,
    # normalisation, and tensors of many sizes (sequence length changes per step).
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(3, 32, 3, padding=1), nn.Conv2d(32, 64, 3, padding=1)
            self.bn = nn.BatchNorm2d(64)
            self.proj = nn.Linear(64, 128)
            self.attn = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            x = F.avg_pool2d(F.relu(self.conv1(x)), 2)  # max_pool's backward is not deterministic
            x = F.relu(self.bn(self.conv2(x)))              # b, 64, h, w
            x = self.proj(x.flatten(2).transpose(1, 2))     # b, h*w, 128
            return self.head(self.attn(x).mean(dim=1))

    net = Net().to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    gen = torch.Generator(device="cpu").manual_seed(99)
    losses = []
    # Batch and image size change every step, so the allocator keeps splitting,
    # growing and (expandable segments) unmapping and remapping memory while earlier
    # kernels may still be queued.
    for step in range(12):
        batch, side = ((8, 16), (64, 48), (16, 24), (48, 40), (32, 32), (24, 16))[step % 6]
        x = torch.randn(batch, 3, side, side, generator=gen).to(dev)
        y = torch.randint(10, (batch,), generator=gen).to(dev)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item().hex())
    torch.cuda.synchronize()
    digest = hashlib.sha256()
    for name, p in sorted(net.state_dict().items()):
        digest.update(name.encode())
        digest.update(p.detach().cpu().contiguous().numpy().tobytes())
    used = None
    if plugin:
        import ctypes
        lib = ctypes.CDLL(plugin)
        lib.vl_torch_stat.restype = ctypes.c_int64
        lib.vl_torch_stat.argtypes = [ctypes.c_int, ctypes.c_char_p]
        used = lib.vl_torch_stat(0, b"allocs")
    return dict(losses=losses, weights_sha256=digest.hexdigest(), vramlab_allocs=used)


def start_worker(plugin, spec):
    """Starts one training run; its output goes to files (a full pipe would stall it)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker"] + ([plugin] if plugin else [])
    env = dict(os.environ, CUBLAS_WORKSPACE_CONFIG=":4096:8", PYTHONUNBUFFERED="1")
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if spec:
        env["VRAMLAB_ALLOC"] = spec
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    return subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True), out, err


def finish_worker(worker):
    """Waits for a started run: its JSON line, or None after printing its output."""
    proc, out, err = worker
    rc = proc.wait()
    with out, err:
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if rc != 0:
        sys.stderr.write(stdout + stderr)
        return None
    return json.loads(stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        print(json.dumps(train(sys.argv[2] if len(sys.argv) > 2 else None)))
        return 0
    if len(sys.argv) != 2:
        print("usage: torch_training_equal.py PLUGIN_SO", file=sys.stderr)
        return 2
    plugin = os.path.abspath(sys.argv[1])
    rc = gpu_check.skip()  # 77 with one line without torch or a GPU
    if rc:
        return rc
    if not os.path.exists(plugin):
        print(f"torch_training_equal: {plugin}: no such file", file=sys.stderr)
        return 2

    workers = [start_worker(None, None)] + [start_worker(plugin, spec) for spec in SPECS]
    ref, *runs = [finish_worker(w) for w in workers]
    if ref is None:
        print("FAIL: the reference run on PyTorch's allocator failed")
        return 1
    failed = 0
    for spec, got in zip(SPECS, runs):
        if got is None:
            print(f"FAIL {spec}: the run on vramlab's allocator failed")
            failed += 1
        elif not got["vramlab_allocs"] or got["vramlab_allocs"] <= 0:
            print(f"FAIL {spec}: vramlab's allocator was not used (allocs={got['vramlab_allocs']})")
            failed += 1
        elif got["losses"] != ref["losses"] or got["weights_sha256"] != ref["weights_sha256"]:
            print(f"FAIL {spec}: results differ from PyTorch's allocator\n  torch:   {ref}\n  vramlab: {got}")
            failed += 1
        else:
            print(f"ok   {spec}: {len(got['losses'])} steps, losses and weights bit-identical "
                  f"({got['vramlab_allocs']} allocations through vramlab), last loss "
                  f"{float.fromhex(got['losses'][-1]):.6f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
