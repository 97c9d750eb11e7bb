#!/usr/bin/env python3
"""Records a small real PyTorch allocation trace on a GPU box for tests/compare/gpu_run.sh:
a 4-layer transformer encoder trained for 12 steps with a varying sequence length,
under torch.cuda.memory._record_memory_history; writes the _dump_snapshot() pickle to
argv[1] (bench/replay reads it through scripts/torch-snapshot-to-csv). Exit 77 without
torch or a GPU."""
import sys

try:
    import torch
except ImportError:
    print("no torch", file=sys.stderr)
    sys.exit(77)
if not torch.cuda.is_available():
    print("no CUDA device", file=sys.stderr)
    sys.exit(77)

torch.manual_seed(0)
torch.cuda.memory._record_memory_history(max_entries=200000)
layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 4).cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(12):
    seq = (64, 128, 256, 192)[step % 4]
    x = torch.randn(16, seq, 512, device="cuda")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(sys.argv[1])
print(f"recorded: peak allocated {torch.cuda.max_memory_allocated()} bytes, "
      f"peak reserved {torch.cuda.max_memory_reserved()} bytes")
