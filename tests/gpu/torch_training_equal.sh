#!/bin/sh
# GPU-box test (make test-gpu-torch): PyTorch training on vramlab's pluggable allocator
# equals training on PyTorch's own. Exits 77 with one line without python3/torch/GPU.
# Usage: tests/gpu/torch_training_equal.sh [build/lib/libvramlab_caching.so]
plugin=${1:-build/lib/libvramlab_caching.so}
command -v python3 >/dev/null 2>&1 || { echo "no python3"; exit 77; }
exec python3 "$(dirname "$0")/torch_training_equal.py" "$plugin"
