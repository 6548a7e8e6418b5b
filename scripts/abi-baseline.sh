#!/usr/bin/env bash
# abi-baseline.sh [BUILD_DIR]: writes abi/libforkless.so.0.abi, the ABI of
# this tree's libforkless.so as abidw sees it, for scripts/check-abi.sh to
# compare later builds with. Run it at a release only (abi/README.md).
# BUILD_DIR: a RelWithDebInfo build tree; without it, one is made in a
# temporary directory. The output holds no path of this machine: the same
# sources give the same file wherever they are built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v abidw >/dev/null || { echo "abi-baseline: abidw not found (apt-get install abigail-tools)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -ge 1 ]; then
  build=$1
else
  build=$tmp/build
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBUILD_TESTING=OFF -DFL_PEERS=OFF >/dev/null
  cmake --build "$build" -j"${JOBS:-2}" --target forkless_shared >/dev/null
fi
# Only the exported interface and the types the public header declares;
# file names without their directories, no compilation directory.
abidw --headers-dir "$root/include" --drop-private-types --exported-interfaces-only \
  --no-corpus-path --no-comp-dir-path --short-locs \
  --out-file "$root/abi/libforkless.so.0.abi" "$build/src/libforkless.so"
echo "abi-baseline: wrote abi/libforkless.so.0.abi from $build/src/libforkless.so"
"$root/scripts/abi-constants.sh" >"$root/abi/constants.txt"
echo "abi-baseline: wrote abi/constants.txt ($(wc -l <"$root/abi/constants.txt") constants)"
