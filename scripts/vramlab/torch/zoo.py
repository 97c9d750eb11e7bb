"""The workload zoo of `make torch-bench`: which live workloads (workloads.py) it runs, the
category each covers, what changes from one step to the next, how many steps are warm-up,
and the two fixed halves: defaults are tuned on ZOO_TUNE and confirmed on ZOO_CONFIRM.

Plain Python without torch, so that bench.py's driver, --dry-run and test_bench.py read it
on a machine without torch. The four workloads the allocator's defaults were first tuned
on (transformer, resnet50, gpt2, moe) are in the tuning half; the confirming half has a
workload of each kind that half tunes on (a variable-resolution CNN, a variable-length
sequence model, KV-cache decoding, training of a language model) that it has never seen,
plus kinds of its own.
"""
from collections import namedtuple

Workload = namedtuple("Workload", "name half category varies warmup")

TUNE, CONFIRM = "tune", "confirm"

ZOO = (
    Workload("transformer", TUNE, "variable-length attention training",
             "batch 16-32 x sequence 64-512", 5),
    Workload("resnet50", TUNE, "variable-resolution CNN training",
             "batch 16-64, image 128-256 px", 4),
    Workload("gpt2", TUNE, "KV-cache growth (torch.cat), inference of variable batch and length",
             "batch 1-16, prompt 16-384, 4-20 new tokens per request", 2),
    Workload("moe", TUNE, "mixture of experts, routed token counts",
             "batch 4-16 x sequence 64-512; tokens per expert", 4),
    Workload("lstm", TUNE, "variable-length recurrent training",
             "batch 32-96, every sentence's length 8-120 (packed)", 3),
    Workload("ckpt", TUNE, "activation checkpointing (torch.utils.checkpoint)",
             "batch 4-12 x sequence 128-1024", 3),
    Workload("lm-fixed", CONFIRM, "fixed-shape language-model training, mixed precision (bf16 autocast)",
             "nothing: batch 16 x 512 tokens every step", 3),
    Workload("unet", CONFIRM, "variable-resolution CNN training (U-Net)",
             "batch 4-16, image 96-320 px", 3),
    Workload("vit", CONFIRM, "variable-resolution ViT training",
             "batch 16-64, image 96-320 px (interpolated position embedding)", 3),
    Workload("accum", CONFIRM, "gradient accumulation",
             "4 micro-batches per step, each batch 8-32 x length 32-256", 3),
    Workload("serve", CONFIRM, "inference of variable batch and length (torch.inference_mode)",
             "batch 1-64, every sequence's length 16-512 (padding mask)", 3),
    Workload("kv-static", CONFIRM, "KV-cache decoding into a preallocated cache",
             "batch 1-16, prompt 16-512, 8-40 new tokens per request", 2),
    Workload("big", CONFIRM, "a model larger than half the GPU: frozen bf16 backbone, trained head",
             "tokens per step 256-2048", 3),
)
# Outside the zoo, run only when named (--workloads): the zoo's CNN and ViT at one shape,
# to confirm plan=1 (lib/caching/plan.h), designed on lm-fixed, on repeating programs of
# other kinds. Not in either half: no default is tuned or confirmed on them.
EXTRA = "extra"
EXTRAS = (
    Workload("cnn-fixed", EXTRA, "fixed-shape CNN training (ResNet-50)", "nothing: batch 32 x 224 px every step", 4),
    Workload("vit-fixed", EXTRA, "fixed-shape ViT training", "nothing: batch 48 x 224 px every step", 3),
    # added after plan=1's layout was revised on cnn-fixed and vit-fixed: held out from it
    Workload("unet-fixed", EXTRA, "fixed-shape U-Net training", "nothing: batch 12 x 224 px every step", 3),
    Workload("lstm-fixed", EXTRA, "fixed-shape LSTM tagger training",
             "nothing: 64 sentences of 64 tokens every step", 3),
)
BY_NAME = {w.name: w for w in ZOO + EXTRAS}
ZOO_TUNE = tuple(w.name for w in ZOO if w.half == TUNE)
ZOO_CONFIRM = tuple(w.name for w in ZOO if w.half == CONFIRM)
HALVES = {TUNE: ZOO_TUNE, CONFIRM: ZOO_CONFIRM, "all": tuple(w.name for w in ZOO)}
# make torch-bench QUICK=1 (tiny sizes): one workload of each machinery path -- a plain
# training step, a recurrent net, inference under inference_mode, the large model
QUICK = ("transformer", "lstm", "serve", "big")


def half_of(name):
    """'tune', 'confirm', 'extra' (EXTRAS), or '' for an unknown workload."""
    w = BY_NAME.get(name)
    return w.half if w else ""
