#!/bin/bash
# scripts/check-package.sh [BUILD_DIR]: the Debian packages.
#
# Builds (Release) in BUILD_DIR, or in a temporary directory if none is
# given (.ci/run passes the one scripts/check-install.sh built), makes the
# packages with `cpack -G DEB`, and checks them:
#   - three packages, libforkless<SOVERSION>, libforkless-dev and forkless,
#     with their sections, dependencies (dpkg-shlibdeps: libc6; -dev on the
#     runtime package of the same version) and files: the library and its
#     SONAME link in the runtime package, the header, libforkless.so, the
#     archive, forkless.pc and the CMake files in -dev, /usr/bin/forkless and
#     the bash completion in forkless;
#   - dpkg -i of all three; the installed forkless --version and its
#     completion; the consumer (tests/consumer/check.sh) built against the
#     system's forkless with pkg-config, pkg-config --static and
#     find_package;
#   - dpkg --purge of all three, after which none of their files is left.
# The packages are removed at exit whatever happens. Needs root (dpkg -i):
# otherwise it says SKIP and exits 77.
set -euo pipefail
# No grep -q after a pipe here: it stops reading at the first match, the
# writer dies of SIGPIPE, and pipefail reads that as a failure.
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
if [ "$(id -u)" -ne 0 ]; then
    echo "check-package: SKIP: dpkg -i needs root"
    exit 77
fi
command -v dpkg >/dev/null || { echo "check-package: SKIP: not a Debian system (no dpkg)"; exit 77; }

need=()
command -v dpkg-shlibdeps >/dev/null || need+=(dpkg-dev)
command -v file >/dev/null || need+=(file)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v readelf >/dev/null || need+=(binutils)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

tmp=$(mktemp -d)
installed=()
cleanup() {
    local rc=$?
    if [ ${#installed[@]} -gt 0 ]; then
        echo "check-package: removing ${installed[*]}"
        dpkg --purge "${installed[@]}" >/dev/null || rc=1
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
fail() { echo "check-package: FAIL: $*" >&2; exit 1; }

build=${1:-$tmp/build}
version=$(sed -nE 's/^project\(forkless VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
echo "check-package: Release build in $build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DFL_PEERS=OFF >/dev/null
cmake --build "$build" -j"$jobs" >"$tmp/build.log" || { tail -50 "$tmp/build.log"; exit 1; }
soname=$(readelf -d "$build/src/libforkless.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libforkless.so.[0-9]* ]] || fail "the built library's SONAME is '$soname'"
runtime=libforkless${soname#libforkless.so.}
packages=("$runtime" libforkless-dev forkless)

for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'ok installed' >/dev/null; then
        fail "$p is installed already: this check would replace and then remove it"
    fi
done

echo "check-package: cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$tmp/debs") >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack"; }
mapfile -t debs < <(find "$tmp/debs" -maxdepth 1 -name '*.deb' | sort)
[ ${#debs[@]} -eq 3 ] || fail "cpack made ${#debs[@]} packages, not 3: ${debs[*]##*/}"

declare -A deb
for d in "${debs[@]}"; do
    deb[$(dpkg-deb -f "$d" Package)]=$d
done
for p in "${packages[@]}"; do
    [ -n "${deb[$p]:-}" ] || fail "no package $p among ${debs[*]##*/}"
done

# field PACKAGE FIELD
field() { dpkg-deb -f "${deb[$1]}" "$2"; }
# has PACKAGE PATH...: each PATH is in the package.
has() {
    local p=$1 f
    shift
    for f in "$@"; do
        dpkg-deb -c "${deb[$p]}" | awk '{ print $6 }' | grep -x -- ".$f" >/dev/null ||
            fail "$p has no $f"
    done
}
for p in "${packages[@]}"; do
    [ "$(field "$p" Version)" = "$version" ] || fail "$p: version $(field "$p" Version), not $version"
    echo "check-package: $p $(field "$p" Version): Section $(field "$p" Section); Depends: $(field "$p" Depends)"
done
[ "$(field "$runtime" Section)" = libs ] || fail "$runtime: section $(field "$runtime" Section)"
[ "$(field libforkless-dev Section)" = libdevel ] || fail "libforkless-dev: section $(field libforkless-dev Section)"
[ "$(field forkless Section)" = utils ] || fail "forkless: section $(field forkless Section)"
[[ $(field "$runtime" Depends) == *libc6* ]] || fail "$runtime does not depend on libc6 (dpkg-shlibdeps)"
[[ $(field forkless Depends) == *libc6* ]] || fail "forkless does not depend on libc6 (dpkg-shlibdeps)"
[[ ", $(field libforkless-dev Depends), " == *", $runtime (= $version),"* ]] ||
    fail "libforkless-dev does not depend on $runtime (= $version)"

libdir=$(dpkg-deb -c "${deb[$runtime]}" | awk '{ print $6 }' | sed -n "s|^\.\(/.*\)/$soname\$|\1|p")
[ -n "$libdir" ] || fail "$runtime has no $soname"
# The SONAME is a link to the real file, and both are there.
target=$(dpkg-deb -c "${deb[$runtime]}" | awk -v f=".$libdir/$soname" '$6 == f && $7 == "->" { print $8 }')
[ -n "$target" ] || fail "$runtime: $libdir/$soname is not a link"
has "$runtime" "$libdir/$target"
has libforkless-dev /usr/include/forkless.h "$libdir/libforkless.so" "$libdir/libforkless.a" \
    "$libdir/pkgconfig/forkless.pc" "$libdir/cmake/forkless/forklessConfig.cmake" \
    "$libdir/cmake/forkless/forklessConfigVersion.cmake"
has forkless /usr/bin/forkless /usr/share/bash-completion/completions/forkless \
    /usr/share/man/man1/forkless.1.gz /usr/share/doc/forkless/changelog.gz
has libforkless-dev /usr/share/man/man3/libforkless.3.gz /usr/share/man/man3/fl_spawn.3.gz \
    /usr/share/man/man3/fl_pipefail.3.gz /usr/share/doc/libforkless-dev/changelog.gz
# The library is in its own package only.
for p in libforkless-dev forkless; do
    ! dpkg-deb -c "${deb[$p]}" | grep "/$soname" >/dev/null || fail "$p holds $soname too"
done
dpkg-deb --ctrl-tarfile "${deb[$runtime]}" | tar -xO ./shlibs 2>/dev/null | grep "^libforkless ${soname#libforkless.so.} $runtime" >/dev/null ||
    fail "$runtime has no shlibs entry for $soname"
dpkg-deb --fsys-tarfile "${deb[libforkless-dev]}" | tar -xO ".$libdir/pkgconfig/forkless.pc" | grep -x 'prefix=/usr' >/dev/null ||
    fail "libforkless-dev: forkless.pc does not say prefix=/usr"
echo "check-package: contents as expected ($runtime: $libdir/$soname -> $target)"

echo "check-package: dpkg -i ${debs[*]##*/}"
installed=("${packages[@]}")
dpkg -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i"; }
mapfile -t files < <(dpkg -L "${packages[@]}" | sort -u | while read -r f; do [ -d "$f" ] || echo "$f"; done)
ldconfig -p | grep "$soname " >/dev/null || fail "ldconfig does not know $soname"
[ "$(/usr/bin/forkless --version)" = "forkless $version" ] || fail "forkless --version: $(/usr/bin/forkless --version)"
echo "check-package: /usr/bin/forkless --version: $(/usr/bin/forkless --version)"
got=$(bash -c 'source /usr/share/bash-completion/completions/forkless &&
    COMP_WORDS=(forkless ru) COMP_CWORD=1 && _forkless && echo "${COMPREPLY[*]}"')
[ "$got" = run ] || fail "the installed completion of 'forkless ru' is '$got'"
/usr/bin/forkless run --timeout 5 -- /bin/true || fail "forkless run /bin/true"

"$src/tests/consumer/check.sh" "$tmp/consumer" "$version"

echo "check-package: dpkg --purge ${packages[*]}"
dpkg --purge "${packages[@]}" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --purge"; }
installed=()
left=0
for f in "${files[@]}"; do
    if [ -e "$f" ] || [ -L "$f" ]; then echo "check-package: $f is left" >&2; left=1; fi
done
[ "$left" -eq 0 ] || fail "files left after dpkg --purge"
! ldconfig -p | grep "$soname " >/dev/null || fail "ldconfig still lists $soname"
echo "check-package: ${#files[@]} files installed and removed; passed"
