#!/usr/bin/env python3
"""PyTorch through libvramlab_caching_raise.so (lib/torch/raise_on_oom.cpp): a request the
device cannot hold raises a RuntimeError saying "CUDA out of memory", and afterwards the
CUDA context and the allocator still work (a tensor is made, filled and summed). With the
plain vl_alloc the same request returns NULL and the next kernel faults.
  torch_oom_raises.py PATH_TO_libvramlab_caching_raise.so
Exit 0 (and a counts line) when both hold, 1 when one fails, 77 without torch or a GPU."""
import sys

try:
    import torch
except ImportError:
    print("SKIP torch_oom_raises: no torch for python3")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP torch_oom_raises: no GPU for torch")
    sys.exit(77)
alloc = torch.cuda.memory.CUDAPluggableAllocator(sys.argv[1], "vl_alloc_or_raise", "vl_free")
torch.cuda.memory.change_current_allocator(alloc)
_, total = torch.cuda.mem_get_info()
passed = failed = 0
try:
    torch.empty(2 * total, dtype=torch.uint8, device="cuda")
    print(f"FAIL an allocation of twice the device ({2 * total} bytes) succeeded")
    failed += 1
except RuntimeError as e:
    ok = "CUDA out of memory" in str(e)
    print(f"{'ok  ' if ok else 'FAIL'} twice the device raised RuntimeError: {str(e).splitlines()[0]}")
    passed, failed = passed + ok, failed + (not ok)
n = 1 << 24
try:
    x = torch.ones(n, device="cuda")
    ok = int(x.sum().item()) == n
    torch.cuda.synchronize()
except Exception as e:  # the context or the allocator did not survive
    ok = False
    print(f"FAIL after the raise: {type(e).__name__}: {e}")
print(f"{'ok  ' if ok else 'FAIL'} after the raise, a 64 MiB tensor is made and summed on the same context")
passed, failed = passed + ok, failed + (not ok)
print(f"torch_oom_raises: {passed} passed, {failed} failed, 0 skipped")
sys.exit(1 if failed else 0)
