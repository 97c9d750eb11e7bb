#!/usr/bin/env bash
# Fetches what a GPU box without a package registry needs and unpacks it into .deps/,
# which travels with the working tree (git ignores it). Run on a machine with apt-get
# and pip:
#   - Debian packages: cmocka (`make test`), hyperfine (`make hyperfine`);
#   - RAPIDS RMM for the `rmm` peer backend (`make peers`): the librmm wheel for nvcc's
#     CUDA major version (headers, its own CCCL, librmm.so) and rapids-logger, unpacked
#     into .deps/rmm/ (librmm/..., rapids_logger/...).
# VL_FETCH_RMM=0 skips RMM; RMM_VERSION pins its version (default: the newest).
set -eu
cd "$(dirname "$0")/.."
mkdir -p .deps/debs
(cd .deps/debs && apt-get download libcmocka0 libcmocka-dev hyperfine >/dev/null)
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps; done
echo "unpacked into .deps/: $(ls .deps/debs | tr '\n' ' ')"

[ "${VL_FETCH_RMM:-1}" = 1 ] || exit 0
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda_major=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
[ -n "$cuda_major" ] || { echo "fetch-deps: no nvcc: cannot tell which librmm-cuXX to fetch" >&2; exit 1; }
rmm_pkg=librmm-cu$cuda_major${RMM_VERSION:+==$RMM_VERSION}
wheels=$(mktemp -d) # only the unpacked tree travels: it is what `make peers` uses
trap 'rm -rf "$wheels"' EXIT
# Wheels are platform-specific: ask for manylinux x86_64 whatever this python is.
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --python-version 3.12 --dest "$wheels" "$rmm_pkg" rapids-logger
rm -rf .deps/rmm && mkdir -p .deps/rmm
for whl in "$wheels"/librmm_cu"$cuda_major"-*.whl "$wheels"/rapids_logger-*.whl; do
    python3 -m zipfile -e "$whl" .deps/rmm
done
echo "unpacked into .deps/rmm/: $(cd "$wheels" && ls librmm_cu"$cuda_major"-*.whl rapids_logger-*.whl | tr '\n' ' ')"
