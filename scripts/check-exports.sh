#!/usr/bin/env bash
# check-exports.sh LIB [HEADER [MAP]]: the shared library exports exactly the
# functions that the header declares with FL_API, each under the symbol
# version of the map (src/libforkless.map), and nothing else: no internal
# fl__ helper, no libc or sanitizer symbol. CTest runs it as abi.exports.
set -euo pipefail
. "${0%/*}/std-path.sh" # the standard PATH, whatever PATH is
here=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:?usage: check-exports.sh LIB [HEADER [MAP]]}
header=${2:-$here/include/forkless.h}
map=${3:-$here/src/libforkless.map}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

# The header's FL_API functions: the name before the first '(' of each
# declaration (the macro's own definition lines have none).
grep -E '^FL_API ' "$header" | sed -E 's/^[^(]*[ *](fl_[a-z0-9_]+)\(.*/\1/' |
  sort -u >"$tmp/header"
[ -s "$tmp/header" ] || { echo "no FL_API functions found in $header" >&2; exit 1; }
if grep -v '^fl_[a-z0-9_]*$' "$tmp/header" >&2; then
  echo "FL_API declarations above that this script cannot read" >&2; bad=1
fi

# The map's global names and its version node(s).
sed -e 's,/\*.*\*/,,' -e '/\/\*/,/\*\//d' "$map" | tr -s ' \t' '\n\n' >"$tmp/map.words"
awk '/^global:$/ { g = 1; next } /^local:$/ || /^}/ { g = 0 } g && /;$/ { sub(/;$/, ""); print }' \
  "$tmp/map.words" | sort -u >"$tmp/map"
# The version nodes: FORKLESS_0.2, and any later one that inherits it.
sed -n 's/^\([A-Z][A-Z0-9_.]*\);*$/\1/p' "$tmp/map.words" | sort -u >"$tmp/nodes"
[ -s "$tmp/nodes" ] || { echo "no version node in $map" >&2; exit 1; }
nodes=$(paste -sd'|' "$tmp/nodes")

# What the library exports: nm -D --defined-only prints "ADDR TYPE NAME@@VERSION";
# the version node itself is an absolute symbol (type A) named after it.
nm -D --defined-only "$lib" | awk '{ print $NF }' | sort >"$tmp/dynsym"
grep -vxFf "$tmp/nodes" "$tmp/dynsym" >"$tmp/syms" || true
if grep -vE "^fl_[a-z0-9_]*@@($nodes)\$" "$tmp/syms" >"$tmp/foreign"; then
  echo "exported but not an fl_ function of version $nodes:" >&2
  sed 's/^/  /' "$tmp/foreign" >&2; bad=1
fi
while read -r node; do
  grep -qxF "$node" "$tmp/dynsym" || { echo "no version node $node in $lib" >&2; bad=1; }
done <"$tmp/nodes"
sed 's/@.*//' "$tmp/syms" | sort -u >"$tmp/lib"

report() {  # report WHAT A B: the names in A that B lacks
  local missing
  missing=$(comm -23 "$2" "$3")
  if [ -n "$missing" ]; then
    echo "$1:" >&2; printf '  %s\n' $missing >&2; bad=1
  fi
}
report "declared FL_API in $(basename "$header") but not exported" "$tmp/header" "$tmp/lib"
report "exported but not declared FL_API in $(basename "$header")" "$tmp/lib" "$tmp/header"
report "declared FL_API but missing from $(basename "$map")" "$tmp/header" "$tmp/map"
report "in $(basename "$map") but not declared FL_API" "$tmp/map" "$tmp/header"

if [ "$bad" -ne 0 ]; then
  echo "check-exports: FAILED for $lib" >&2
  exit 1
fi
echo "check-exports: $(wc -l <"$tmp/lib") fl_ functions, all of them FL_API in $(basename "$header"), version $nodes, nothing else exported"
