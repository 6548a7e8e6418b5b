#!/bin/sh
# check.sh EXPECTED PROGRAM [ARG]...: runs PROGRAM (stdout and stderr
# together), shows what it printed, and checks it against EXPECTED: each of
# its lines, but blank ones and those that start with '#', is an extended
# regular expression that must match a whole line of the output, in order
# (lines of the output in between are allowed: timings, say).
# Exit status: 77 when the program exits 77 (it cannot run here: CTest's
# skip), 0 when it exits 0 and every line matched, 1 otherwise.
. "${0%/*}/../scripts/std-path.sh" # the standard PATH, whatever PATH is
expected=$1
shift
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 77 ] && exit 77
if [ "$rc" -ne 0 ]; then
  echo "check.sh: $1 exited with status $rc" >&2
  exit 1
fi
awk -v file="$expected" '
  BEGIN {
    i = 0; n = 0   # numbers, not "": i is an array index below
    while ((getline l < file) > 0)
      if (l != "" && l !~ /^#/) want[n++] = l
    if (n == 0) { print "check.sh: nothing expected in " file; bad = 1; exit 1 }
  }
  i < n && $0 ~ ("^(" want[i] ")$") { i++ }
  END {
    if (bad) exit 1
    if (i < n) { print "check.sh: no line of the output (after the ones matched) matches: " want[i]; exit 1 }
  }' "$out" >&2
