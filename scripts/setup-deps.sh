#!/usr/bin/env bash
# Makes sure what `make test` needs is here: the cmocka test framework. Uses the
# system's when installed, else one unpacked into .deps/ (how it travels to GPU boxes
# that have no package registry), else installs it with apt-get when that works.
set -eu
cd "$(dirname "$0")/.."
[ -f /usr/include/cmocka.h ] && exit 0
[ -f .deps/usr/include/cmocka.h ] && exit 0
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing cmocka (apt-get install libcmocka-dev)"
    apt-get install -y -qq libcmocka-dev >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && apt-get install -y -qq libcmocka-dev >/dev/null; }
    [ -f /usr/include/cmocka.h ] && exit 0
fi
echo "setup: cmocka is missing: install libcmocka-dev, or run scripts/fetch-deps.sh on a machine with apt and copy .deps/ here" >&2
exit 1
