"""One zoo workload (vramlab/torch/workloads.py, bench size) in this process, one allocator:
per-step wall time, and through vramlab's plugin the device map and unmap calls and the
allocator's own time, cumulative at each step, for the per-step diagnosis of an allocator
setting (one process is one sample: a diagnosis, never a verdict; make torch-bench decides).

  scripts/vl torch.research.record_steps WORKLOAD torch|vramlab OUT.json
  (vramlab: VRAMLAB_ALLOC=SPEC VRAMLAB_TIME=1, the plugin at build/lib/libvramlab_caching.so)

docs/torch-bench.md, section "vramlab/torch/research/record_steps.py", has the rest."""
import ctypes
import json
import os
import sys
import time

from vramlab import ROOT


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("torch", "vramlab"):
        sys.exit("usage: scripts/vl torch.research.record_steps WORKLOAD torch|vramlab OUT.json")
    import torch
    from vramlab.torch import bench, workloads

    w, kind, out = sys.argv[1:4]
    if w not in workloads.RUN:
        sys.exit(f"record_steps: no workload '{w}' (known: {', '.join(sorted(workloads.RUN))})")
    lib = None
    if kind == "vramlab":
        so = os.path.join(ROOT, "build", "lib", "libvramlab_caching.so")
        torch.cuda.memory.change_current_allocator(torch.cuda.memory.CUDAPluggableAllocator(so, "vl_alloc", "vl_free"))
        lib = ctypes.CDLL(so)
        lib.vl_torch_stat.restype = ctypes.c_int64
        lib.vl_torch_stat.argtypes = [ctypes.c_int, ctypes.c_char_p]
    bench.deterministic(torch)
    free0, total = torch.cuda.mem_get_info()
    steps, t = [], [time.perf_counter()]

    def stat(n):
        return lib.vl_torch_stat(0, n.encode())

    def counters():
        if lib:
            return [stat("device_allocs"), stat("device_frees"), stat("alloc_ns") + stat("free_ns")]
        s = torch.cuda.memory_stats()
        return [s.get("num_device_alloc"), s.get("num_device_free"), None]

    def on_step(i):
        torch.cuda.synchronize()
        now = time.perf_counter()
        f, _ = torch.cuda.mem_get_info()
        steps.append([(now - t[0]) * 1e3] + counters() + [total - f])
        t[0] = time.perf_counter()

    workloads.RUN[w]("bench", 1, on_step)
    if lib:
        peaks = dict(alloc=stat("peak_allocated_bytes"), reserved=stat("peak_reserved_bytes"))
    else:
        s = torch.cuda.memory_stats()
        peaks = dict(alloc=s.get("allocated_bytes.all.peak"), reserved=s.get("reserved_bytes.all.peak"))
    with open(out, "w") as fh:
        json.dump(dict(workload=w, kind=kind, spec=os.environ.get("VRAMLAB_ALLOC") or
                       os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default"),
                       steps=steps, peaks=peaks, base=total - free0), fh)


if __name__ == "__main__":
    main()
