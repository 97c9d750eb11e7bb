#!/usr/bin/env bash
# Fetches the Debian packages a GPU box without a package registry needs (cmocka for
# `make test`, hyperfine for `make hyperfine`) and unpacks them into .deps/, which
# travels with the working tree. Run on a machine with apt-get.
set -eu
cd "$(dirname "$0")/.."
mkdir -p .deps/debs
(cd .deps/debs && apt-get download libcmocka0 libcmocka-dev hyperfine >/dev/null)
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps; done
echo "unpacked into .deps/: $(ls .deps/debs | tr '\n' ' ')"
