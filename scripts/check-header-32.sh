#!/usr/bin/env bash
# check-header-32.sh [HEADER]: on a 32-bit glibc, forkless.h must refuse a
# caller built without -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 (its structs
# would then disagree with the library's on rlim_t and time_t), and take
# one built with them, every struct the size it had in 0.2.0 (the ABI
# promise on i686). Compiled with gcc -m32 where the machine has a
# 32-bit libc, else with clang's i686 target over this machine's glibc
# headers (their 32-bit branches, with an empty gnu/stubs-32.h). Exit 77
# (skip) when neither can compile for i686. CTest runs it as
# abi.header_32bit_layout.
set -euo pipefail
. "${0%/*}/std-path.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
header=${1:-$here/include/forkless.h}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <forkless.h>\nint main(void) { return (int)sizeof(struct fl_rlimit); }\n' >"$tmp/t.c"
inc=-I$(dirname "$header")
probe='#include <sys/resource.h>
int x;'
if echo "$probe" | gcc -m32 -x c -fsyntax-only - 2>/dev/null; then
  cc=(gcc -m32)
else
  multi=$(gcc -print-multiarch 2>/dev/null || true)
  if ! command -v clang >/dev/null || [ -z "$multi" ] || [ ! -d "/usr/include/$multi" ]; then
    echo "skip: no compiler for i686 here (gcc -m32 has no 32-bit libc; no clang, or no multiarch headers for it)"
    exit 77
  fi
  mkdir -p "$tmp/fake/gnu"
  : >"$tmp/fake/gnu/stubs-32.h"
  cc=(clang -target i686-linux-gnu -isystem "$tmp/fake" -isystem "/usr/include/$multi")
  if ! echo "$probe" | "${cc[@]}" -x c -fsyntax-only - 2>/dev/null; then
    echo "skip: clang cannot compile for i686 over /usr/include/$multi"
    exit 77
  fi
fi
bad=0
if "${cc[@]}" "$inc" -fsyntax-only "$tmp/t.c" 2>"$tmp/err"; then
  echo "FAIL: forkless.h took a 32-bit caller without -D_FILE_OFFSET_BITS=64" >&2
  bad=1
elif ! grep -q "_FILE_OFFSET_BITS=64" "$tmp/err"; then
  echo "FAIL: the 32-bit refusal does not say what to add:" >&2
  cat "$tmp/err" >&2
  bad=1
fi
if ! "${cc[@]}" "$inc" -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 -fsyntax-only "$tmp/t.c" 2>"$tmp/err"; then
  echo "FAIL: forkless.h refused a 32-bit caller built as the library is:" >&2
  cat "$tmp/err" >&2
  bad=1
fi
# The 0.x ABI on i686: every struct keeps its 0.2.0 size there (abidiff
# checks x86_64 only; a field taken from the reserved space must fit it on
# both). Sizes of forkless.h at 0.2.0, compiled as above.
sizes="cmd=180 contain=72 error=1200 fd_map=8 io=108 landlock_path=8 output=28 pipeline=28
       proc=60 result=196 rlimit=20 sched=48 sink=36 stdio=20 stop_policy=32 tty_options=28"
{
  echo '#include <forkless.h>'
  for kv in $sizes; do
    echo "_Static_assert(sizeof(struct fl_${kv%%=*}) == ${kv#*=}, \"struct fl_${kv%%=*} is not ${kv#*=} bytes on i686, as in 0.2.0\");"
  done
} >"$tmp/sizes.c"
if ! "${cc[@]}" "$inc" -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 -fsyntax-only "$tmp/sizes.c" 2>"$tmp/err"; then
  echo "FAIL: the i686 layout differs from 0.2.0's:" >&2
  cat "$tmp/err" >&2
  bad=1
fi
[ "$bad" = 0 ] && echo "ok: ${cc[*]}: refused without 64-bit rlim_t/time_t, taken with them, every struct the size it had in 0.2.0"
exit "$bad"
