#!/usr/bin/env bash
# abi-constants.sh [CC]: prints "NAME VALUE", sorted, for every enumerator
# and every numeric FL_ macro of include/forkless.h. abidw keeps only the
# enums that a function or a struct field is typed with, and most flag
# sets here are fields typed unsigned: their values are a part of the ABI
# that abidiff cannot see. check-abi.sh compares this list with
# abi/constants.txt. The values come from the compiler, not from this
# script's reading of the header. FL_VERSION_* is left out: it changes at
# every release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
header=$root/include/forkless.h
cc=${1:-${CC:-cc}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Enumerators: the first word of a line inside an enum's braces.
enums=$(awk '/^(typedef )?enum [a-z_]* *\{/ { inside = 1; next }
             inside && /^\};/ { inside = 0 }
             inside && match($0, /^[ \t]+FL_[A-Z0-9_]+/) {
                 s = substr($0, RSTART, RLENGTH); gsub(/[ \t]/, "", s); print s }' "$header")
# Object-like macros with a value that is no string.
macros=$(sed -n 's/^#define \(FL_[A-Z0-9_]*\) \+\([^"]*\)$/\1/p' "$header" |
         grep -v -e '^FL_VERSION_' -e '^FL_API$' || true)
{
  echo '#include <stdio.h>'
  echo '#include "forkless.h"'
  echo 'int main(void) {'
  for n in $enums $macros; do
    echo "    printf(\"%s %lld\\n\", \"$n\", (long long)($n));"
  done
  echo '    return 0; }'
} >"$tmp/c.c"
"$cc" -I"$root/include" -o "$tmp/c" "$tmp/c.c"
"$tmp/c" | LC_ALL=C sort
