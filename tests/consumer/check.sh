#!/bin/bash
# check.sh WORKDIR VERSION [PREFIX]: builds tests/consumer against an
# installed forkless three ways and runs each build:
#   1. cc consumer.c $(pkg-config --cflags --libs forkless): linked against
#      libforkless.so.N (NEEDED, the library's SONAME), found in PREFIX's
#      libdir at run time;
#   2. cc consumer.c $(pkg-config --static --cflags --libs forkless), with
#      libforkless.a: no NEEDED libforkless;
#   3. CMake, find_package(forkless): forkless::forkless_shared,
#      forkless::forkless_static and forkless::forkless (the shared one).
# PREFIX: an install prefix (cmake --install --prefix); without it, the
# system's (the Debian packages), with nothing pointing pkg-config or CMake
# elsewhere. Each consumer must see FL_VERSION_STRING == VERSION. Exits
# non-zero at the first failure.
set -euo pipefail
work=${1:?usage: check.sh WORKDIR VERSION [PREFIX]}
version=${2:?usage: check.sh WORKDIR VERSION [PREFIX]}
prefix=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
mkdir -p "$work"
fail() { echo "consumer: FAIL: $*" >&2; exit 1; }

unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR CMAKE_PREFIX_PATH LD_LIBRARY_PATH
cmake_args=()
if [ -n "$prefix" ]; then
    pc=$(find "$prefix" -name forkless.pc -path '*/pkgconfig/*' | head -1)
    [ -n "$pc" ] || fail "no forkless.pc under $prefix"
    export PKG_CONFIG_PATH=${pc%/*}
    cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix")
fi

pkg-config --exists forkless || fail "pkg-config finds no forkless"
[ "$(pkg-config --modversion forkless)" = "$version" ] ||
    fail "pkg-config --modversion forkless: $(pkg-config --modversion forkless), expected $version"
libdir=$(pkg-config --variable=libdir forkless)
includedir=$(pkg-config --variable=includedir forkless)
if [ -n "$prefix" ]; then
    case $libdir in "$prefix"/*) ;; *) fail "forkless.pc's libdir $libdir is not in $prefix" ;; esac
fi
[ -f "$includedir/forkless.h" ] || fail "no forkless.h in $includedir"
soname=$(readelf -d "$libdir/libforkless.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libforkless.so.[0-9]* ]] || fail "$libdir/libforkless.so has SONAME '$soname'"
[ -e "$libdir/$soname" ] || fail "no $libdir/$soname (the SONAME link)"
echo "consumer: forkless $version, libdir $libdir, SONAME $soname"

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# run_consumer NAME BINARY LINK: LINK shared (NEEDED SONAME, resolved to
# libdir) or static (no libforkless NEEDED).
run_consumer() {
    local name=$1 bin=$2 link=$3
    if [ "$link" = shared ]; then
        needed "$bin" | grep -x "$soname" >/dev/null || fail "$name: NEEDED $(needed "$bin" | tr '\n' ' '), no $soname"
        local resolved
        resolved=$(ldd "$bin" | awk -v so="$soname" '$1 == so { print $3 }')
        [ "$(readlink -f "$resolved")" = "$(readlink -f "$libdir/$soname")" ] ||
            fail "$name: $soname resolves to '$resolved', not $libdir/$soname"
    else
        ! needed "$bin" | grep '^libforkless' >/dev/null || fail "$name: NEEDED $(needed "$bin" | tr '\n' ' ')"
    fi
    echo "consumer: == $name ($link: NEEDED $(needed "$bin" | tr '\n' ' '))"
    "$bin" || fail "$name: exit status $?"
}

# shellcheck disable=SC2206
cflags=(${CFLAGS:-} -Wall -Wextra -DEXPECT_VERSION="\"$version\"")
# 1. pkg-config, shared. Outside the system paths the run finds the
# library through LD_LIBRARY_PATH; ldd checks that it is the installed one.
# shellcheck disable=SC2046
$CC "${cflags[@]}" -o "$work/pc_shared" "$here/consumer.c" $(pkg-config --cflags --libs forkless)
if [ -n "$prefix" ]; then
    LD_LIBRARY_PATH=$libdir run_consumer "pkg-config" "$work/pc_shared" shared
else
    run_consumer "pkg-config" "$work/pc_shared" shared
fi

# 2. pkg-config --static: its flags (Libs.private too), with -lforkless
# taken as the archive.
static_libs=$(pkg-config --static --libs forkless)
static_libs=${static_libs//-lforkless/-l:libforkless.a}
# shellcheck disable=SC2046,SC2086
$CC "${cflags[@]}" -o "$work/pc_static" "$here/consumer.c" $(pkg-config --static --cflags forkless) $static_libs
run_consumer "pkg-config --static" "$work/pc_static" static

# 3. CMake find_package(forkless).
cmake -S "$here" -B "$work/cmake" -DCMAKE_BUILD_TYPE=Release -DEXPECT_VERSION="$version" \
    "${cmake_args[@]}" >"$work/cmake.log" || { cat "$work/cmake.log"; fail "cmake configure"; }
grep -q "forkless" "$work/cmake/CMakeCache.txt"
echo "consumer: find_package(forkless) found $(sed -n 's/^forkless_DIR:PATH=//p' "$work/cmake/CMakeCache.txt")"
if [ -n "$prefix" ]; then
    case $(sed -n 's/^forkless_DIR:PATH=//p' "$work/cmake/CMakeCache.txt") in
    "$prefix"/*) ;; *) fail "find_package found forkless outside $prefix" ;;
    esac
fi
cmake --build "$work/cmake" >"$work/cmake-build.log" || { cat "$work/cmake-build.log"; fail "cmake build"; }
run_consumer "find_package, forkless::forkless_shared" "$work/cmake/consumer_shared" shared
run_consumer "find_package, forkless::forkless_static" "$work/cmake/consumer_static" static
run_consumer "find_package, forkless::forkless" "$work/cmake/consumer_plain" shared
echo "consumer: all builds passed"
