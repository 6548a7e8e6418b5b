#!/usr/bin/env bash
# Static analysis: clang-tidy (checks in .clang-tidy) and cppcheck on src/,
# tools/, bench/ and examples/ (the bench's peer programs in bench/peers/
# are other projects' APIs on purpose and are left out).
#
#   scripts/lint.sh [BUILD_DIR]     default: build-lint (compile database)
#
# Exit status 1 on any finding. cppcheck suppressions live in
# scripts/cppcheck.supp, each with its reason. clang-tidy findings that are
# known and reported to the code's owner, not yet fixed, are listed (file
# and check, no line numbers) in scripts/clang-tidy.baseline with the
# reason; they are printed but do not fail. Remove an entry once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-lint}
for t in clang-tidy cppcheck; do
  command -v "$t" >/dev/null || { echo "lint.sh: $t missing (apt-get install clang-tidy cppcheck)" >&2; exit 2; }
done

cmake -S . -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
# The generated headers the sources include (src/seccomp.c: syscall_names.h).
cmake --build "$build" --target fl_syscall_names >/dev/null
files=(src/*.c tools/*.c bench/*.c examples/*.c)
rc=0

echo "== cppcheck $(cppcheck --version | cut -d' ' -f2)"
cppcheck --enable=warning,performance,portability --error-exitcode=1 \
  --inline-suppr --suppressions-list=scripts/cppcheck.supp --quiet \
  --std=c11 -D__linux__ -D__x86_64__ -D__GNUC__ -D_GNU_SOURCE \
  -I include -I src -I bench -I tools "${files[@]}" || rc=1

echo "== clang-tidy $(clang-tidy --version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)"
# One file per process, two at a time; --quiet drops the per-file counts of
# warnings that the configuration turns off.
printf '%s\n' "${files[@]}" |
  xargs -P"${JOBS:-2}" -n4 clang-tidy -p "$build" --quiet 2>&1 |
  grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Use -system-headers' |
  tee "$build/clang-tidy.log" || true
# "path:line:col: error: text [check,-warnings-as-errors]" -> "path check"
grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): .*\[[A-Za-z0-9.,_-]+\]$' "$build/clang-tidy.log" |
  sed -E "s|^$PWD/||; s|^([^:]+):[0-9]+:[0-9]+: [a-z]+: .*\[([^],]+).*|\1 \2|" |
  sort -u >"$build/clang-tidy.found"
grep -vE '^(#|$)' scripts/clang-tidy.baseline | awk '{print $1, $2}' | sort -u >"$build/clang-tidy.known"
new=$(comm -23 "$build/clang-tidy.found" "$build/clang-tidy.known")
fixed=$(comm -13 "$build/clang-tidy.found" "$build/clang-tidy.known")
echo "clang-tidy: $(wc -l <"$build/clang-tidy.found") file/check pairs found," \
  "$(wc -l <"$build/clang-tidy.known") in the baseline"
if [ -n "$fixed" ]; then
  echo "clang-tidy: baseline entries no longer found (remove them):"; echo "$fixed"
fi
if [ -n "$new" ]; then
  echo "clang-tidy: NEW findings (fix them, or add to scripts/clang-tidy.baseline with a reason):"
  echo "$new"; rc=1
fi
[ $rc -eq 0 ] && echo "lint.sh: clean (apart from the baseline)"
exit $rc
