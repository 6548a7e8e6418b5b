#!/bin/bash
# scripts/check-install.sh [BUILD_DIR]: the install, as a consumer sees it.
#
# Configures and builds a Release build in BUILD_DIR (default: a temporary
# directory, removed at exit; .ci/run passes one and hands it on to
# scripts/check-package.sh), installs it with `cmake --install --prefix`
# into a fresh temporary prefix, checks the files there, and builds and runs
# the out-of-tree consumer tests/consumer against that prefix three ways
# (pkg-config, pkg-config --static, CMake find_package): see
# tests/consumer/check.sh.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}

need=()
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v readelf >/dev/null || need+=(binutils)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "check-install: needs ${need[*]}" >&2; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build=${1:-$tmp/build}
prefix=$tmp/prefix
version=$(sed -nE 's/^project\(forkless VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "check-install: no version in CMakeLists.txt" >&2; exit 1; }

echo "check-install: Release build in $build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DFL_PEERS=OFF >/dev/null
cmake --build "$build" -j"$jobs" >"$tmp/build.log" || { tail -50 "$tmp/build.log"; exit 1; }

echo "check-install: cmake --install --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
# What the install must hold, wherever GNUInstallDirs puts the libdir.
libdir=$(dirname "$(find "$prefix" -name libforkless.a | head -1)")
[ -d "$libdir" ] || { echo "check-install: no libforkless.a in $prefix" >&2; exit 1; }
missing=0
for f in include/forkless.h "${libdir#"$prefix"/}"/{libforkless.a,libforkless.so,pkgconfig/forkless.pc} \
         "${libdir#"$prefix"/}"/cmake/forkless/{forklessConfig.cmake,forklessConfigVersion.cmake,forklessTargets.cmake} \
         bin/forkless share/bash-completion/completions/forkless; do
    [ -e "$prefix/$f" ] || { echo "check-install: $prefix/$f is missing" >&2; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
ls "$libdir"/libforkless.so.* >/dev/null
grep -qx "prefix=$prefix" "$libdir/pkgconfig/forkless.pc" ||
    { echo "check-install: forkless.pc does not say prefix=$prefix:" >&2; cat "$libdir/pkgconfig/forkless.pc" >&2; exit 1; }
[ "$("$prefix/bin/forkless" --version)" = "forkless $version" ]
echo "check-install: $(cd "$prefix" && find . -type f -o -type l | wc -l) files installed, forkless $version"

"$src/tests/consumer/check.sh" "$tmp/consumer" "$version" "$prefix"
echo "check-install: passed"
