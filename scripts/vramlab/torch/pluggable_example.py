"""How to run PyTorch on vramlab's caching allocator.

    make plugin
    VRAMLAB_ALLOC=caching:segments=expandable scripts/vl torch.pluggable_example

The allocator must be swapped in before the first CUDA allocation of the process.
VRAMLAB_ALLOC takes any vramlab caching SPEC (`build/bin/<any program> --alloc help`
lists the options); the helpers vl_torch_* (lib/torch/vramlab_caching.h) give its
statistics and release its cache, through ctypes.
"""
import ctypes
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SO = os.environ.get("VRAMLAB_SO", os.path.join(ROOT, "build", "lib", "libvramlab_caching.so"))

if not torch.cuda.is_available():
    print("no CUDA device")
    sys.exit(77)

allocator = torch.cuda.memory.CUDAPluggableAllocator(SO, "vl_alloc", "vl_free")
torch.cuda.memory.change_current_allocator(allocator)

lib = ctypes.CDLL(SO)
lib.vl_torch_stat.restype = ctypes.c_int64
lib.vl_torch_stat.argtypes = [ctypes.c_int, ctypes.c_char_p]
lib.vl_torch_trim.restype = ctypes.c_size_t
lib.vl_torch_spec.restype = ctypes.c_char_p

model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(5):
    loss = model(torch.randn(256, 1024, device="cuda")).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.5f}")

dev = torch.cuda.current_device()
print(f"allocator: {lib.vl_torch_spec().decode()}")
for name in ("allocs", "peak_allocated_bytes", "peak_reserved_bytes", "segments", "ooms"):
    print(f"  {name:22s} {lib.vl_torch_stat(dev, name.encode())}")
print(f"  trim released {lib.vl_torch_trim(dev)} bytes")
