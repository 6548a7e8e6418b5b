#!/usr/bin/env bash
# Builds the library, the CLI and the test suite with musl-gcc (Debian's
# musl-tools) and runs the suite with the clone and posix_spawn backends
# (the fork backend is glibc/musl-neutral and already runs in the glibc
# builds). See docs/musl.md for what differs from glibc.
#
#   scripts/musl.sh [BUILD_DIR]        default: build-musl
#
# Exit status: 0 when every selected test passed (or skipped with reason).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-musl}
command -v musl-gcc >/dev/null || { echo "musl.sh: musl-gcc missing (apt-get install musl-tools)" >&2; exit 2; }

# musl-gcc's specs search only musl's own include directory, not
# /usr/include, so the Linux UAPI headers (linux/sched.h, asm/...) are not
# found. Point it at a directory holding just those (never glibc's headers).
kinc=$PWD/$build/kernel-include
mkdir -p "$kinc"
triplet=$(gcc -dumpmachine)
for d in linux asm-generic mtd; do
  [ -e "$kinc/$d" ] || [ ! -d /usr/include/$d ] || ln -s /usr/include/$d "$kinc/$d"
done
[ -e "$kinc/asm" ] || ln -s "/usr/include/$triplet/asm" "$kinc/asm"

CC=musl-gcc CFLAGS="-isystem $kinc ${MUSL_CFLAGS:-}" \
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

# Only what the suite needs: the bench peers want glibc-side libraries
# (libuv, GLib, other languages) that musl cannot link against. Left out,
# with the reason (MUSL_SKIP lists test programs, MUSL_SKIP_RE their tests):
#  - test_input: it runs the `forkless` CLI, which links bench/, whose
#    machine.c includes glibc's <gnu/libc-version.h>;
#  - the cli.* tests: they run the `forkless` CLI too (same reason);
#  - test_malloc_trap: it wraps malloc through glibc's __libc_malloc and
#    friends, which musl does not export (the trap is glibc-only by design).
skip=${MUSL_SKIP-test_input test_malloc_trap}
skip_re=${MUSL_SKIP_RE-'^(input|malloc_trap|cli)\.'}
targets=(fl_probe)
for src in tests/test_*.c; do
  t=$(basename "$src" .c)
  case " $skip " in *" $t "*) continue ;; esac
  targets+=("$t")
done
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"

# Every case of every area, clone and posix_spawn backends (MUSL_BACKENDS).
backends=${MUSL_BACKENDS:-clone posix_spawn}
ctest --test-dir "$build" -R "\\.(${backends// /|})\$" ${skip_re:+-E "$skip_re"} -j"${JOBS:-2}" \
  --output-on-failure --timeout 180 ${MUSL_CTEST_ARGS:-}
