#!/usr/bin/env bash
# check-man.sh: the manual pages in man/ (mdoc(7), written by hand).
#
#   scripts/check-man.sh [--no-install] [BUILD_DIR]
#
# (a) every FL_API function of include/forkless.h has a page in man/: its
#     own, or an alias: a symlink NAME.3 -> PAGE.3 beside it (mandoc calls
#     .so fragile), whose page names it in NAME; each page shows the
#     function in its SYNOPSIS; and forkless(1)
#     has every long option of `forkless run` and `forkless pipe`;
# (b) every page is clean under `mandoc -T lint -W warning`, and under
#     `groff -mandoc -ww -z` where groff is installed;
# (c) `cmake --install` into a fresh prefix puts them where man(1) finds
#     them: MANPATH=PREFIX/share/man man -w forkless libforkless fl_spawn
#     fl_pipefail, and every function name. With BUILD_DIR, that build is
#     installed whole; without, a fresh configure in a temporary directory
#     builds the compressed pages and runs man/'s own install script.
#
# --no-install (the CTest test man_pages) does (a) and (b) only, and exits
# 77 (skipped) after (a) where mandoc is missing. Otherwise a missing mandoc
# or man is installed with apt-get when run as root, and is an error else.
set -euo pipefail
. "${0%/*}/std-path.sh" # the standard PATH, whatever PATH is
cd "$(dirname "$0")/.."

install=1
build=
for arg in "$@"; do
  case $arg in
    --no-install) install=0 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-man.sh: unknown option $arg" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done

fail=0
bad() { echo "check-man.sh: $*" >&2; fail=1; }

# ---- (a) a page for every public function --------------------------------
# The header without preprocessor lines and comments, on one line; then each
# FL_API declaration up to its '(' and the last identifier before it (the
# name may be on the line after FL_API and the return type).
header=include/forkless.h
stripped=$(grep -v '^[[:space:]]*#' "$header" | tr '\n' ' ' |
  sed -e 's#/\*\([^*]\|\*\+[^*/]\)*\*\+/# #g')
functions=$(grep -o '\bFL_API\b[^;(]*(' <<<"$stripped" |
  sed -e 's/[[:space:]]*($//' -e 's/.*[^A-Za-z0-9_]//' | sort -u)
declared=$(grep -o '\bFL_API\b' <<<"$stripped" | wc -l)
nfun=$(printf '%s\n' "$functions" | grep -c . || true)
if [ "$nfun" -eq 0 ] || [ "$nfun" -ne "$declared" ]; then
  bad "$header: found $nfun function names for $declared FL_API declarations"
fi

is_alias() { [ -L "$1" ]; }

for f in $functions; do
  page=man/$f.3
  if [ ! -f "$page" ] && [ ! -L "$page" ]; then
    bad "$f: no man/$f.3 (a page, or a symlink to one: ln -s PAGE.3 man/$f.3)"
    continue
  fi
  if is_alias "$page"; then
    link=$(readlink "$page")
    target=man/$link
    if [[ $link == */* ]] || [ ! -f "$target" ] || is_alias "$target"; then
      bad "$page -> $link: an alias must link to a page beside it (ln -s PAGE.3 $page)"
      continue
    fi
  elif grep -q '^\.so' "$page"; then
    bad "$page: make the alias a symlink (ln -sf PAGE.3 $page): mandoc calls .so fragile"
    continue
  else
    target=$page
  fi
  grep -Eq "^\.Nm $f( ,)?\$" "$target" || bad "$target: NAME does not list $f"
  grep -Eq "^\.F[no] \(?\*?$f( |\$)" "$target" || bad "$target: SYNOPSIS does not show $f"
done

# forkless(1): every long option of run (tools/options.c and the containment
# options of tools/contain_opts.h) and of pipe (tools/pipe.c), as "Fl \-name"
# (or "Fl x , \-name").
options=$(sed -n 's/^[[:space:]]*{ *"\([a-z0-9-]*\)", *\(no\|required\|optional\)_argument.*/\1/p' \
  tools/options.c tools/contain_opts.h tools/pipe.c | sort -u)
[ -n "$options" ] || bad "no long options found in tools/"
for o in $options; do
  grep -Eq "(Fl|,) \\\\-${o//-/\\\\-}([^a-z0-9\\\\]|\$)" man/forkless.1 ||
    bad "man/forkless.1: no --$o"
done
[ "$fail" -eq 0 ] && echo "check-man.sh: (a) $nfun functions and $(printf '%s\n' "$options" | wc -l) options have their pages"

# ---- (b) the pages render without warnings -------------------------------
need_tool() {  # need_tool COMMAND PACKAGE
  command -v "$1" >/dev/null && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
    command -v "$1" >/dev/null && return 0
  fi
  echo "check-man.sh: $1 is missing: install $2 (apt-get install $2), or run this as root" >&2
  return 1
}
if ! command -v mandoc >/dev/null && [ "$install" -eq 0 ]; then
  [ "$fail" -eq 0 ] || exit 1
  echo "SKIP: mandoc is not installed: lint skipped (apt-get install mandoc)"
  exit 77
fi
need_tool mandoc mandoc || exit 1
# The whole check (CI) lints with groff too; the CTest one where it is.
if [ "$install" -eq 1 ]; then
  need_tool groff groff-base || exit 1
fi
pages=()
for p in man/*.1 man/*.3; do
  is_alias "$p" || pages+=("$p")
done
mandoc -T lint -W warning "${pages[@]}" || bad "mandoc -T lint -W warning: see above"
if command -v groff >/dev/null; then
  for p in "${pages[@]}"; do
    out=$(groff -mandoc -ww -z "$p" 2>&1) || true
    [ -z "$out" ] || { printf '%s\n' "$out" >&2; bad "groff -ww -z $p: warnings"; }
  done
fi
[ "$fail" -eq 0 ] && echo "check-man.sh: (b) ${#pages[@]} pages lint clean (mandoc -T lint -W warning$(command -v groff >/dev/null && echo ', groff -ww -z'))"
if [ "$install" -eq 0 ]; then
  exit "$fail"
fi
[ "$fail" -eq 0 ] || exit 1

# ---- (c) installed where man(1) finds them -------------------------------
need_tool man man-db || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$build" ]; then
  cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
else
  # Only the compressed pages built, and man/'s own install script run for
  # the two components its pages belong to.
  cmake -S . -B "$tmp/build" -DBUILD_TESTING=OFF -DFL_PEERS=OFF >/dev/null
  cmake --build "$tmp/build" --target fl_man_pages >/dev/null
  for component in command dev; do
    cmake -DCMAKE_INSTALL_PREFIX="$tmp/prefix" -DCMAKE_INSTALL_COMPONENT=$component \
      -P "$tmp/build/man/cmake_install.cmake" >/dev/null
  done
fi
mandir=$tmp/prefix/share/man
for name in forkless libforkless $functions; do
  where=$(MANPATH=$mandir man -w "$name" 2>/dev/null) || { bad "man -w $name: not found in $mandir"; continue; }
  case $where in
    "$mandir"/*) ;;
    *) bad "man -w $name: $where, not under $mandir" ;;
  esac
done
# An alias renders its group's page.
MANPATH=$mandir MANWIDTH=80 MANPAGER=cat man fl_pipefail 2>/dev/null | grep 'fl_pipeline_spawn' >/dev/null ||
  bad "man fl_pipefail does not show fl_pipeline_spawn(3)"
[ "$fail" -eq 0 ] && echo "check-man.sh: (c) man -w finds forkless, libforkless and all $nfun functions in $(
  [ -n "$build" ] && echo "cmake --install $build" || echo "man/cmake_install.cmake")"
exit "$fail"
