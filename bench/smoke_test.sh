#!/bin/sh
# smoke_test.sh FORKLESS OUTDIR: `forkless bench heap` runs every arm, writes
# valid JSON, and refuses bad options with exit status 2. It checks that the
# bench works, never how fast anything is.
set -u
fl=$1
out=$2
fail=0

"$fl" bench heap --target tiny --heap 0,8 -n 3 --budget 0 \
    --arms fork_exec,vfork_exec,posix_spawn,clone_vm,forkless,forkless_full,forkless_keep,forkless_posix,forkless_fork \
    --json "$out/bench_smoke.json" >"$out/bench_smoke.txt"
rc=$?
cat "$out/bench_smoke.txt"
if [ $rc -ne 0 ]; then
    echo "FAIL: bench heap exited $rc"
    fail=1
fi
rows=$(grep -c '^heap ' "$out/bench_smoke.txt")
if [ "$rows" -ne 18 ]; then
    echo "FAIL: expected 18 rows, got $rows"
    fail=1
fi
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["suite"]=="heap" and len(d["rows"])==18, d' \
        "$out/bench_smoke.json" || { echo "FAIL: bad JSON"; fail=1; }
else
    echo "note: python3 not found, JSON not validated"
fi

for bad in "-n 0" "-n 5x" "--heap 1,,2" "--pages 2m" "--arms nope" "--target /" "--frob"; do
    # shellcheck disable=SC2086
    "$fl" bench heap $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench heap $bad exited $rc, expected 2"
        fail=1
    fi
done
"$fl" bench nosuchsuite >/dev/null 2>&1
rc=$?
if [ $rc -ne 2 ]; then
    echo "FAIL: unknown suite exited $rc, expected 2"
    fail=1
fi
exit $fail
