#!/usr/bin/env bash
# check-abi.sh [BUILD_DIR]: compares libforkless.so with the ABI baseline of
# the last release, abi/libforkless.so.0.abi, with abidiff (abigail-tools),
# and fails on a change that breaks a program built against that release.
#
# BUILD_DIR: a build tree whose src/libforkless.so has DWARF (-g, as the
# default RelWithDebInfo build has); without it, the shared library is
# built in a temporary directory with RelWithDebInfo, as the baseline was.
#
# What passes, besides no change at all:
#   - added functions (abidiff reports them; they are printed);
#   - added enumerators at new values (abidiff files those as harmless);
#   - new fields in a public struct's reserved space: the struct keeps its
#     size, every new field lies at or after the baseline offset of the
#     struct's first reserved* member, and of the old members only
#     reserved* ones changed (type, offset, name) or went.
# Anything else fails: a removed function (abidiff's "incompatible" bit), a
# changed parameter or return type, a struct that changes size or moves,
# retypes or drops a field outside its reserved space, a renumbered or
# removed enumerator or FL_ constant (abi/constants.txt, for the flag sets
# that abidiff does not see), a change to a type from the libc that the
# API uses.
# A new field must also mean the old behaviour at zero (forkless.h's
# promise); no tool checks that.
#
# abi/README.md: regenerating the baseline at a release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
baseline=$root/abi/libforkless.so.0.abi

for tool in abidiff readelf; do
  command -v "$tool" >/dev/null || { echo "check-abi: $tool not found (apt-get install abigail-tools binutils)" >&2; exit 1; }
done
[ -f "$baseline" ] || { echo "check-abi: no baseline $baseline" >&2; exit 1; }
arch=$(sed -n "s/.*<abi-corpus .*architecture='\([^']*\)'.*/\1/p" "$baseline" | head -1)
if [ "$(uname -m)" != x86_64 ] || [ "$arch" != elf-amd-x86_64 ]; then
  echo "check-abi: SKIP: the baseline is x86_64's ($arch), this machine is $(uname -m)"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -ge 1 ]; then
  lib=$1/src/libforkless.so
else
  echo "check-abi: building the shared library (RelWithDebInfo) in $tmp/build"
  cmake -S "$root" -B "$tmp/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBUILD_TESTING=OFF -DFL_PEERS=OFF >"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log" >&2; exit 1; }
  cmake --build "$tmp/build" -j"${JOBS:-2}" --target forkless_shared >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log" >&2; exit 1; }
  lib=$tmp/build/src/libforkless.so
fi
[ -e "$lib" ] || { echo "check-abi: no $lib" >&2; exit 1; }
readelf -S "$lib" | grep '\.debug_info' >/dev/null ||
  { echo "check-abi: $lib has no DWARF (build it with -g)" >&2; exit 1; }

# The exports first: only the header's FL_API functions, versioned.
"$root/scripts/check-exports.sh" "$lib"

# The constants next: abidw keeps only the enums that a function or a
# field is typed with, and the flag sets here travel in unsigned fields.
# Every enumerator and numeric macro of the baseline must keep its value;
# new ones are printed.
"$root/scripts/abi-constants.sh" >"$tmp/constants"
changed=$(LC_ALL=C join -a 1 -e '(gone)' -o 1.1,1.2,2.2 "$root/abi/constants.txt" "$tmp/constants" |
          awk '$2 != $3 { print "  " $1 ": " $2 " -> " $3 }')
if [ -n "$changed" ]; then
  echo "check-abi: FAILED: constants of the baseline changed or gone (abi/constants.txt):" >&2
  echo "$changed" >&2
  exit 1
fi
LC_ALL=C join -v 2 "$root/abi/constants.txt" "$tmp/constants" | sed 's/^/  constant added: /'
echo "check-abi: the $(wc -l <"$root/abi/constants.txt") constants of the baseline keep their values"

# Every function of the baseline, under its symbol version: a program
# linked against it asks for fl_spawn@FORKLESS_0.2, say, and abidiff does
# not compare a function whose version changed.
sed -n "s/.*<elf-symbol name='\([^']*\)' version='\([^']*\)'.*/\1@\2/p" "$baseline" | sort -u >"$tmp/base.syms"
nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@@*/@/' | sort -u >"$tmp/lib.syms"
lost=$(comm -23 "$tmp/base.syms" "$tmp/lib.syms")
if [ -n "$lost" ]; then
  echo "check-abi: FAILED: the baseline's symbols missing (or under another version) in $lib:" >&2
  printf '  %s\n' $lost >&2
  exit 1
fi

echo "== abidiff abi/$(basename "$baseline") (the last release) $lib"
set +e
abidiff --headers-dir2 "$root/include" "$baseline" "$lib" >"$tmp/full" 2>&1
rc=$?
set -e
cat "$tmp/full"
# abidiff's status bits: 1 error, 2 usage error, 4 ABI change, 8 an
# incompatible ABI change (today: a removed function or variable).
if (( rc & 3 )); then
  echo "check-abi: abidiff failed (status $rc)" >&2; exit 1
fi
if (( rc & 8 )); then
  echo "check-abi: FAILED: an incompatible ABI change (status $rc): see the removed symbols above" >&2
  exit 1
fi
if (( rc == 0 )); then
  echo "check-abi: OK: no ABI change from the baseline"
  exit 0
fi

# A change: what is left without the added symbols, one entry per changed
# leaf type, to be vetted as reserved-space use.
set +e
abidiff --headers-dir2 "$root/include" --leaf-changes-only --no-added-syms \
  "$baseline" "$lib" >"$tmp/leaf" 2>&1
rc=$?
set -e
if (( rc & 3 )); then
  cat "$tmp/leaf" >&2; echo "check-abi: abidiff failed (status $rc)" >&2; exit 1
fi
if (( rc == 0 )); then
  echo "check-abi: OK: compatible additions only (listed above)"
  exit 0
fi

# Where each public struct's reserved space starts in the baseline: the
# offset (in bits) of its first member named reserved*.
awk '
  /<class-decl name=.fl_/ { match($0, /name=.[A-Za-z0-9_]+/); s = substr($0, RSTART + 6, RLENGTH - 6) }
  /<\/class-decl>/ { s = "" }
  s != "" && /<data-member / { match($0, /layout-offset-in-bits=.[0-9]+/); off = substr($0, RSTART + 23, RLENGTH - 23) }
  s != "" && /<var-decl name=.reserved/ && !(s in seen) { seen[s] = 1; print s, off }
' "$baseline" >"$tmp/reserved"

if awk -v reserved="$tmp/reserved" '
  BEGIN { while ((getline line < reserved) > 0) { split(line, f, " "); start[f[1]] = f[2] } }
  function bad(why) { print "  not reserved-space use: " why; nbad++ }
  function member_name(l,   m) {
    # type "T" of "S::M" changed:, or "T M[N]" offset changed ..., or "T M", at offset ...
    # (abidiff quotes with apostrophes)
    if (match(l, /of .[A-Za-z0-9_]+::[A-Za-z0-9_]+. changed:$/)) {
      m = substr(l, RSTART, RLENGTH); sub(/^of .[A-Za-z0-9_]+::/, "", m); sub(/. changed:$/, "", m); return m
    }
    if (match(l, /^ *.[^\047]*\047/)) {
      m = substr(l, RSTART, RLENGTH); sub(/(\[[0-9]*\])*\047$/, "", m); sub(/.*[^A-Za-z0-9_]/, "", m); return m
    }
    return ""
  }
  /^Removed\/Changed\/Added (functions|variables) summary:/ {
    if ($0 !~ /summary: 0 Removed, 0 Changed/) bad("a removed or changed function or variable")
    next
  }
  /^\047struct fl_[A-Za-z0-9_]+ at .*\047 changed:$/ {
    s = $2; sub(/^\047/, "", s); cur = ""; mode = ""; print "struct " s ":"; next
  }
  /^\047.*\047 changed:$/ { s = ""; bad("a leaf change that is not a public struct: " $0); next }
  /^[^ ]/ { s = ""; next }
  /^  [^ ]/ {
    if (s == "") { if ($0 !~ /^  \[/) next; bad($0); next }
    if ($0 ~ /^  type size hasn.t changed$/) next
    if ($0 ~ /^  [0-9]+ data member insertions?:$/) { mode = "ins"; next }
    if ($0 ~ /^  [0-9]+ data member deletions?:$/) { mode = "del"; next }
    if ($0 ~ /^  there are data member changes:$/) { mode = "chg"; next }
    bad(s ": " $0); next
  }
  /^    [^ ]/ && s != "" {
    if (mode == "ins") {
      match($0, /at offset [0-9]+/); off = substr($0, RSTART + 10, RLENGTH - 10) + 0
      if (!(s in start)) bad(s " has no reserved space: " $0)
      else if (off < start[s] + 0) bad(s ": inserted before its reserved space (bit " start[s] "): " $0)
      else print "  field added in reserved space:" substr($0, 4)
      next
    }
    if (mode == "del" || mode == "chg") {
      if (mode == "chg" && $0 ~ /^    and /) m = cur; else m = member_name($0)
      cur = m
      if (m !~ /^reserved/) bad(s ": member " (m == "" ? "?" : m) " changed: " $0)
      next
    }
    bad(s ": " $0); next
  }
  END { exit nbad > 0 }
' "$tmp/leaf" >"$tmp/verdict"; then
  cat "$tmp/verdict"
  echo "check-abi: OK: compatible: additions and fields in reserved space only (zero must mean the old behaviour)"
  exit 0
fi
cat "$tmp/verdict"
echo "check-abi: FAILED: an ABI change that a program built against the baseline may not survive (status $rc):" >&2
cat "$tmp/leaf" >&2
exit 1
