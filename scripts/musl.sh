#!/usr/bin/env bash
# Builds the library, the CLI, the benches and the test suite with
# musl-gcc (Debian's musl-tools) and runs the whole suite: every case with
# every backend, the CLI tests and the bench smoke test. docs/musl.md says
# what differs from glibc.
#
#   scripts/musl.sh [BUILD_DIR]        default: build-musl
#
# Exit status: 0 when every test passed or was skipped with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-musl}
case $build in /*) ;; *) build=$PWD/$build ;; esac
command -v musl-gcc >/dev/null || { echo "musl.sh: musl-gcc missing (apt-get install musl-tools)" >&2; exit 2; }

# musl-gcc's specs search only musl's own include directory, not
# /usr/include, so the Linux UAPI headers (linux/sched.h, asm/...) are not
# found. Point it at a directory holding just those (never glibc's headers).
kinc=$build/kernel-include
mkdir -p "$kinc"
triplet=$(gcc -dumpmachine)
for d in linux asm-generic mtd; do
  [ -e "$kinc/$d" ] || [ ! -d /usr/include/$d ] || ln -s /usr/include/$d "$kinc/$d"
done
[ -e "$kinc/asm" ] || ln -s "/usr/include/$triplet/asm" "$kinc/asm"

# FL_PEERS=OFF: the peers of `forkless bench peers` link against glibc-side
# libraries and runtimes (libuv, GLib, Rust, Java).
CC=musl-gcc CFLAGS="-isystem $kinc ${MUSL_CFLAGS:-}" \
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFL_PEERS=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}"

# Under the posix_spawn backend, a case that needs close-others asserts
# musl's refusal (ENOTSUP, step prepare) and is then skipped, saying so.
ctest --test-dir "$build" -j"${JOBS:-2}" --output-on-failure \
  --timeout 180 ${MUSL_CTEST_ARGS:-}
