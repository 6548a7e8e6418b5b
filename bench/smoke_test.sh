#!/bin/sh
# smoke_test.sh FORKLESS OUTDIR: `forkless bench heap` runs every arm, writes
# valid JSON and CSV and keeps a --reserve mapped; `forkless bench all` runs
# a suite with --quick; bad options are refused with exit status 2. It checks that the
# bench works, never how fast anything is.
. "${0%/*}/../scripts/std-path.sh" # the standard PATH, whatever PATH is
set -u
fl=$1
out=$2
src=$(dirname "$0")
fail=0

# MiB this test may take: MemAvailable, or less where this process's cgroup
# (v2, or v1's memory hierarchy) has less room left.
free_mib() {
    awk '/^MemAvailable:/ { printf "%.0f\n", $2 / 1024 }' /proc/meminfo
    cg2=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup 2>/dev/null)
    cg1=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' /proc/self/cgroup 2>/dev/null)
    for lim in "$cg2/memory.max:$cg2/memory.current" \
               "$cg1/memory.limit_in_bytes:$cg1/memory.usage_in_bytes"; do
        cat "${lim%%:*}" "${lim#*:}" 2>/dev/null | paste -s -d ' ' - |
            awk '$1 ~ /^[0-9]+$/ && NF == 2 { printf "%.0f\n", ($1 - $2) / 1048576 }'
    done
} 2>/dev/null
room=$(free_mib | sort -n | head -n 1)
room=${room:-0}

"$fl" bench heap --target tiny --heap 0,8 -n 3 --budget 0 \
    --arms fork_exec,vfork_exec,posix_spawn,clone_vm,clone_vm_clean,forkless,forkless_full,forkless_keep,forkless_posix,forkless_fork \
    --json "$out/bench_smoke.json" >"$out/bench_smoke.txt"
rc=$?
cat "$out/bench_smoke.txt"
if [ $rc -ne 0 ]; then
    echo "FAIL: bench heap exited $rc"
    fail=1
fi
rows=$(grep -c '^heap ' "$out/bench_smoke.txt")
if [ "$rows" -ne 20 ]; then
    echo "FAIL: expected 20 rows, got $rows"
    fail=1
fi
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["suite"]=="heap" and len(d["rows"])==20, d' \
        "$out/bench_smoke.json" || { echo "FAIL: bad JSON"; fail=1; }
else
    echo "note: python3 not found, JSON not validated"
fi

# An arm with a floor of its own shows the ratio to it too.
grep -q '^heap .* forkless  .* x[0-9.]* clone_vm  *x[0-9.]* clone_vm_clean$' "$out/bench_smoke.txt" ||
    { echo "FAIL: bench heap: no forkless ratio to clone_vm_clean"; fail=1; }

# Where clone3() is denied (as in a container's default seccomp profile),
# clone_vm_clean does what the library's clone() fallback does.
if "$fl" run --seccomp-deny clone3 --seccomp-errno ENOSYS -- true 2>/dev/null; then
    "$fl" run --seccomp-deny clone3 --seccomp-errno ENOSYS -- "$fl" bench heap --target tiny \
        --heap 0 -n 2 --arms clone_vm_clean,forkless >"$out/bench_smoke_noclone3.txt" 2>&1 &&
        grep -q '^heap .* clone_vm_clean n' "$out/bench_smoke_noclone3.txt" ||
        { cat "$out/bench_smoke_noclone3.txt"; echo "FAIL: bench heap without clone3"; fail=1; }
else
    echo "skip: bench heap without clone3: no seccomp filter can be installed here"
fi

# Pinned to one CPU by default, with a line at the end on who else used it;
# --cpu all leaves the scheduler to place the bench.
grep -q '^load average .*; pinned to CPU [0-9]' "$out/bench_smoke.txt" ||
    { echo "FAIL: bench heap: no \"pinned to CPU\" line"; fail=1; }
grep -q '^cpu: CPU [0-9]* (pinned, with the children); .* others took' "$out/bench_smoke.txt" ||
    { echo "FAIL: bench heap: no \"cpu:\" line at the end"; fail=1; }
"$fl" bench heap --target tiny --heap 0 -n 2 --arms clone_vm --cpu all >"$out/bench_smoke_cpu.txt" 2>&1 &&
    grep -q '^cpu: CPUs* [0-9,-]* (not pinned: --cpu all); .* others took' "$out/bench_smoke_cpu.txt" ||
    { echo "FAIL: bench heap --cpu all"; cat "$out/bench_smoke_cpu.txt"; fail=1; }
for bad in "-n 0" "-n 5x" "--heap 1,,2" "--pages 2m" "--arms nope" "--target /" "--frob" \
           "--cpu" "--cpu x" "--cpu 99999" "--cpu 1023"; do
    # shellcheck disable=SC2086
    "$fl" bench heap $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench heap $bad exited $rc, expected 2"
        fail=1
    fi
done
# worker, loop and call: tiny counts; each runs, prints its rows, writes
# JSON that parses (python3 -m json.tool) and a CSV with a line per row.
smoke_suite() {   # NAME ROWS ARGS...
    name=$1
    want=$2
    shift 2
    "$fl" bench "$name" "$@" --json "$out/bench_smoke_$name.json" \
        --csv "$out/bench_smoke_$name.csv" >"$out/bench_smoke_$name.txt"
    rc=$?
    cat "$out/bench_smoke_$name.txt"
    if [ $rc -ne 0 ]; then
        echo "FAIL: bench $name exited $rc"
        fail=1
    fi
    if [ "$want" = static ]; then   # call: 7 rows, or 4 without the static program
        if grep -q 'static rows skipped' "$out/bench_smoke_$name.txt"; then want=4; else want=7; fi
    fi
    got=$(grep -c "^$name " "$out/bench_smoke_$name.txt")
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: bench $name: expected $want rows, got $got"
        fail=1
    fi
    got=$(wc -l <"$out/bench_smoke_$name.csv")
    if [ "$got" -ne $((want + 1)) ]; then
        echo "FAIL: bench $name: expected $((want + 1)) CSV lines, got $got"
        fail=1
    fi
    if command -v python3 >/dev/null 2>&1; then
        python3 -m json.tool "$out/bench_smoke_$name.json" >/dev/null &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["suite"]==sys.argv[2] and len(d["rows"])==int(sys.argv[3]) and all("method" in r for r in d["rows"]), d' \
            "$out/bench_smoke_$name.json" "$name" "$want" || { echo "FAIL: bench $name: bad JSON"; fail=1; }
    fi
}
smoke_suite worker 5 --heap 4 --records 20000 -r 1
smoke_suite loop 4 -n 3 -r 2
smoke_suite call static -n 3 --calls 1000
smoke_suite launch 15 --targets tiny --heap 0 -n 1 --spawns 20 --pipelines 2
# io: a row per arm its --help lists (a missing peer is a "skipped" row),
# none "failed"; no capture arm is taken again when disturbed (the peers
# cannot be), the run and pipeline arms may be; --rounds past --captures
# is cut to it, saying so.
io_rows=$("$fl" bench io --help | sed -n '/^Arms:/,$p' | grep -cE '^  (capture|run|pipeline) ')
smoke_suite io "$io_rows" --mib 1 --captures 2 --rounds 5 -n 3
grep -q '^writer .*: 2 captures per arm in 2 rounds (not --rounds 5' "$out/bench_smoke_io.txt" ||
    { echo "FAIL: bench io --captures 2 --rounds 5: not 2 rounds, or not said"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; assert all(x["status"] in ("ok","skipped") for x in r) and sum(x["status"]=="ok" for x in r)>=7, r' \
        "$out/bench_smoke_io.json" || { echo "FAIL: bench io: a failed or missing row"; fail=1; }
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; assert all(x["retakes"]==(0 if x["part"]=="capture" else 2) and x["retaken"]<=x["n"]*x["retakes"] for x in r), r' \
        "$out/bench_smoke_io.json" || { echo "FAIL: bench io: a capture arm taken again"; fail=1; }
fi
# sandbox: a row per arm and heap (2 cases, 8 arms, 2 heaps with --quick),
# each "ok" or "skipped" (bwrap not installed, no user namespaces or no
# Landlock here), never "failed".
smoke_suite sandbox 16 --quick
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; assert all(x["status"] in ("ok","skipped") for x in r), r' \
        "$out/bench_smoke_sandbox.json" || { echo "FAIL: bench sandbox: a failed row"; fail=1; }
    # Every ratio_X column is this row's median over X's (the row where it is 1).
    python3 -c '
import json, math, sys
rows = [x for x in json.load(open(sys.argv[1]))["rows"] if x["status"] == "ok"]
for col in [c for c in rows[0] if c.startswith("ratio_")]:
    for x in rows:
        base = [b for b in rows if b["case"] == x["case"] and b["heap_mib"] == x["heap_mib"]
                and b[col] is not None and abs(b[col] - 1) < 1e-9]
        if base and x[col] is not None:
            want = x["median_us"] / base[0]["median_us"]
            assert math.isclose(x[col], want, rel_tol=1e-6), (col, x, want)
' "$out/bench_smoke_sandbox.json" || { echo "FAIL: bench sandbox: a ratio_ column is not this row over its base"; fail=1; }
fi
for bad in "worker -r 0" "worker --records 1x" "worker --arms nope" "worker --arms fork,fork" \
           "worker --cycle 0" "worker --heap" "worker --frob" "loop -n 0" "loop -r x" \
           "loop --target /nonexistent/true" "loop --frob" "call -n 0" "call --calls x" "call --frob" \
           "launch -n 0" "launch --spawns x" "launch --pipelines 0" "launch --heap x" "launch --frob" \
           "io --mib 0" "io --captures x" "io --rounds 0" "io -n 0" "io --json" "io --frob" \
           "sandbox -n 0" "sandbox --repeats x" "sandbox --heap 1,,2" "sandbox --heaps x" \
           "sandbox --case nope" "sandbox --case ns,ns" "sandbox --target /" "sandbox --frob" \
           "threads --threads 2,2" "heap --heap 0,0" "launch --heap 1024,1024" \
           "launch --targets tiny,tiny" "threads --targets tiny,tiny" "peers --heap 65537" \
           "worker --heap 65537" "threads --heap 65537"; do
    # shellcheck disable=SC2086
    "$fl" bench $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench $bad exited $rc, expected 2"
        fail=1
    fi
done
# threads: 2 targets x 2 thread counts x 3 arms = 12 rows.
"$fl" bench threads --threads 1,2 -n 2 -r 1 --heap 8 \
    --json "$out/bench_threads.json" --csv "$out/bench_threads.csv" \
    >"$out/bench_threads.txt"
rc=$?
cat "$out/bench_threads.txt"
if [ $rc -ne 0 ]; then
    echo "FAIL: bench threads exited $rc"
    fail=1
fi
rows=$(grep -c '^threads ' "$out/bench_threads.txt")
if [ "$rows" -ne 12 ]; then
    echo "FAIL: bench threads: expected 12 rows, got $rows"
    fail=1
fi
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$out/bench_threads.json" >/dev/null &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["suite"]=="threads" and len(d["rows"])==12 and all("method" in r for r in d["rows"]), d' \
        "$out/bench_threads.json" || { echo "FAIL: bench threads: bad JSON"; fail=1; }
fi
for bad in "-n 0" "-r 0" "--threads 0" "--threads 1,,2" "--seconds 0" "--seconds x" \
           "--arms nope" "--target /" "--heap x" "--frob"; do
    # shellcheck disable=SC2086
    "$fl" bench threads $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench threads $bad exited $rc, expected 2"
        fail=1
    fi
done

# peers: 7 peers (forkless and 6 others) x 2 heaps = 14 rows, each "ok" or
# "skipped" (a runtime that is not installed), never "failed".
"$fl" bench peers --heap 0,8 -n 2 --rounds 1 \
    --json "$out/bench_peers.json" --csv "$out/bench_peers.csv" \
    >"$out/bench_peers.txt"
rc=$?
cat "$out/bench_peers.txt"
if [ $rc -ne 0 ]; then
    echo "FAIL: bench peers exited $rc"
    fail=1
fi
rows=$(grep -c '^peers heap ' "$out/bench_peers.txt")
if [ "$rows" -ne 14 ]; then
    echo "FAIL: bench peers: expected 14 rows, got $rows"
    fail=1
fi
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$out/bench_peers.json" >/dev/null &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["rows"]; assert d["suite"]=="peers" and len(r)==14 and all("method" in x and x["status"] in ("ok","skipped") for x in r) and sum(x["method"]=="forkless" and x["status"]=="ok" for x in r)==2, r' \
        "$out/bench_peers.json" || { echo "FAIL: bench peers: bad JSON"; fail=1; }
fi
for bad in "-n 0" "--heap 1,,2" "--rounds 0" "--peers nope" "--peers python,python" "--target /" "--frob"; do
    # shellcheck disable=SC2086
    "$fl" bench peers $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench peers $bad exited $rc, expected 2"
        fail=1
    fi
done
# A heap past the largest one is refused, naming the largest.
"$fl" bench peers --heap 999999999 >/dev/null 2>"$out/bench_peers_heap.err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q 'from 0 to 65536' "$out/bench_peers_heap.err"; then
    echo "FAIL: bench peers --heap 999999999: exit $rc, expected 2 and the limit 65536:"
    cat "$out/bench_peers_heap.err"
    fail=1
fi
# A peer that was asked for and fails makes the verdict "no (NAME failed)"
# and the run exit 1; one still running at its deadline (1 s here) is
# killed and has failed; one that is not there is skipped, and the run
# passes. FORKLESS_PEERS_BIN holds a Rust peer that exits 1, one that hangs,
# or none.
mkdir -p "$out/bench_peers_bad" "$out/bench_peers_hung" "$out/bench_peers_none"
printf '#!/bin/sh\nexit 1\n' >"$out/bench_peers_bad/peer_rust"
printf '#!/bin/sh\nexec sleep 120\n' >"$out/bench_peers_hung/peer_rust"
chmod +x "$out/bench_peers_bad/peer_rust" "$out/bench_peers_hung/peer_rust"
peer_case() {   # DIR RC PATTERN...: peers --peers rust with that bin dir
    dir=$1
    want=$2
    shift 2
    FORKLESS_PEERS_BIN="$out/$dir" FORKLESS_PEER_TIMEOUT=1 "$fl" bench peers \
        --peers rust --heap 0 -n 2 --rounds 1 >"$out/$dir.txt" 2>&1
    rc=$?
    ok=1
    for pat in "$@"; do
        grep -q "$pat" "$out/$dir.txt" || ok=0
    done
    if [ $rc -ne "$want" ] || [ $ok -ne 1 ]; then
        echo "FAIL: bench peers with $dir: exit $rc, expected $want and $*:"
        cat "$out/$dir.txt"
        fail=1
    fi
}
peer_case bench_peers_bad 1 '^peers heap .* rust  *failed: exited with status 1$' \
    '^forkless faster .*: no (rust failed)$'
peer_case bench_peers_hung 1 '^peers heap .* rust  *failed: timed out after 1 s$' \
    '^forkless faster .*: no (rust failed)$'
peer_case bench_peers_none 0 '^peers heap .* rust  *skipped: ' '^no peer ran'
# The Java and Node peers hold a heap past the most one array or Buffer
# holds (2 GiB, 4 GiB), in several; run alone, where twice that fits.
big_peer() {   # FILE CMD...: CMD runs where FILE (its program) and CMD are here
    f=$1
    shift
    [ -e "$f" ] && command -v "$1" >/dev/null 2>&1 || return 0
    "$@" 1 /bin/true >"$out/bench_peer_big.txt" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || [ "$(grep -c '^[0-9.]*$' "$out/bench_peer_big.txt")" -ne 1 ]; then
        echo "FAIL: $* 1 /bin/true exited $rc:"
        cat "$out/bench_peer_big.txt"
        fail=1
    fi
}
if [ "$room" -ge 9216 ]; then
    big_peer "$out/peers/Peer.class" java -Xms2560m -Xmx2560m -cp "$out/peers" Peer 2048
    big_peer "$src/peers/peer.js" node "$src/peers/peer.js" 4097
fi
for s in threads peers io sandbox; do
    "$fl" bench $s --help >/dev/null 2>&1 || { echo "FAIL: bench $s --help"; fail=1; }
done

# heap --csv and --reserve: the CSV (a header, a line per row) has the same
# rows as the JSON, and the reservation is in the header and in every row.
"$fl" bench heap --target tiny --heap 0,8 -n 3 --budget 0 --reserve 64 \
    --csv "$out/bench_smoke_heap.csv" --json "$out/bench_smoke_heap.json" \
    >"$out/bench_smoke_reserve.txt"
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: bench heap --reserve 64 --csv exited $rc"
    fail=1
fi
grep -q '^reserved 64 GiB' "$out/bench_smoke_reserve.txt" ||
    { echo "FAIL: bench heap --reserve 64: no \"reserved 64 GiB\" line"; fail=1; }
if [ ! -s "$out/bench_smoke_heap.csv" ]; then
    echo "FAIL: bench heap --csv: no CSV written"
    fail=1
else
    head -n 1 "$out/bench_smoke_heap.csv" | grep -q '^suite,method,heap_mib,.*reserve_gib,.*median_us' ||
        { echo "FAIL: bad CSV header: $(head -n 1 "$out/bench_smoke_heap.csv")"; fail=1; }
    csvrows=$(($(wc -l <"$out/bench_smoke_heap.csv") - 1))
    tabrows=$(grep -c '^heap ' "$out/bench_smoke_reserve.txt")
    if [ "$csvrows" -lt 2 ] || [ "$csvrows" -ne "$tabrows" ]; then
        echo "FAIL: bench heap --csv: $csvrows CSV rows, $tabrows in the table"
        fail=1
    fi
    if command -v python3 >/dev/null 2>&1; then
        python3 -m json.tool "$out/bench_smoke_heap.json" >/dev/null ||
            { echo "FAIL: bench heap --json: invalid JSON"; fail=1; }
        python3 -c '
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
js = json.load(open(sys.argv[2]))
assert js["reserve_gib"] == 64, js
assert len(rows) == len(js["rows"]), (len(rows), len(js["rows"]))
for c, j in zip(rows, js["rows"]):
    assert c["method"] == j["method"] and int(c["heap_mib"]) == j["heap_mib"], (c, j)
    assert int(c["reserve_gib"]) == 64 == j["reserve_gib"], (c, j)
' "$out/bench_smoke_heap.csv" "$out/bench_smoke_heap.json" ||
            { echo "FAIL: bench heap: CSV and JSON rows differ"; fail=1; }
    fi
fi

# bench all: runs each suite with --quick, its rows in DIR/NAME.{json,csv}.
"$fl" bench all --suites heap --out "$out/bench_smoke_all" >"$out/bench_smoke_all.txt"
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: bench all --suites heap exited $rc"
    fail=1
fi
grep -q '^== forkless bench heap --quick --json ' "$out/bench_smoke_all.txt" ||
    { echo "FAIL: bench all did not run heap --quick --json"; fail=1; }
for f in heap.json heap.csv; do
    [ -s "$out/bench_smoke_all/$f" ] || { echo "FAIL: bench all wrote no $f"; fail=1; }
done
if [ -s "$out/bench_smoke_all/heap.csv" ] && [ "$(wc -l <"$out/bench_smoke_all/heap.csv")" -lt 2 ]; then
    echo "FAIL: bench all: heap.csv has no rows"
    fail=1
fi
if command -v python3 >/dev/null 2>&1 && [ -s "$out/bench_smoke_all/heap.json" ]; then
    python3 -m json.tool "$out/bench_smoke_all/heap.json" >/dev/null ||
        { echo "FAIL: bench all: heap.json is not valid JSON"; fail=1; }
fi
for bad in "heap --reserve 1x" "heap --heap 65537" "heap --csv" "all --frob" \
           "all --suites nosuchsuite" "all --suites heap," "all --suites heap,heap"; do
    # shellcheck disable=SC2086
    "$fl" bench $bad >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench $bad exited $rc, expected 2"
        fail=1
    fi
done
# bench all refuses a CPU it may not use once, before any suite runs.
"$fl" bench all --cpu 99999 --suites heap,loop >"$out/bench_all_cpu.txt" 2>&1
rc=$?
if [ $rc -ne 2 ] || grep -q '^== forkless bench' "$out/bench_all_cpu.txt"; then
    echo "FAIL: bench all --cpu 99999: exit $rc, expected 2 before any suite"
    cat "$out/bench_all_cpu.txt"
    fail=1
fi
# A heap the machine cannot hold is refused (tried only where 64 GiB do not
# fit, so that it never really maps one).
if [ "$room" -lt 66048 ]; then
    "$fl" bench heap --heap 65536 -n 1 >/dev/null 2>"$out/bench_smoke_big.err"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q 'refused: --heap 65536 .*MemAvailable' "$out/bench_smoke_big.err"; then
        echo "FAIL: a 64 GiB heap with $room MiB free: exit $rc, expected 2 and a message"
        cat "$out/bench_smoke_big.err"
        fail=1
    fi
fi
# Inside a cgroup of 400 MiB (made below this process's own, v2 where its
# memory controller is on, else v1's memory hierarchy; as root only) every
# suite refuses a heap (io: a capture) of 300 MiB that the host's
# MemAvailable would let through and the cgroup's OOM killer would end.
own=$(sed -n 's/^0:://p' /proc/self/cgroup 2>/dev/null)
own1=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' /proc/self/cgroup 2>/dev/null)
memcg=
for d in "/sys/fs/cgroup$own" "/sys/fs/cgroup/unified$own" "/sys/fs/cgroup/memory$own1"; do
    c=$d/forkless-bench-smoke-$$
    [ -z "$memcg" ] && [ "$(id -u)" -eq 0 ] && mkdir "$c" 2>/dev/null || continue
    for f in memory.max memory.limit_in_bytes; do   # a file of a cgroup, not of a tmpfs
        [ -e "$c/cgroup.procs" ] && [ -e "$c/$f" ] && echo $((400 << 20)) >"$c/$f" && memcg=$c
    done 2>/dev/null
    [ -n "$memcg" ] || rmdir "$c"
done
if [ -n "$memcg" ]; then
    for c in "heap --heap" "launch --heap" "sandbox --heap" "threads --heap" "worker --heap" \
             "peers --heap" "io --mib"; do
        # shellcheck disable=SC2086,SC2016
        sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$memcg" \
            "$fl" bench $c 300 --quick >/dev/null 2>"$out/bench_smoke_memcg.err"
        rc=$?
        if [ $rc -ne 2 ] ||
           ! grep -q "refused: ${c#* } 300 .*; cgroup $memcg: limit 400 MiB" "$out/bench_smoke_memcg.err"; then
            echo "FAIL: bench $c 300 in a cgroup of 400 MiB: exit $rc, expected 2 and a message"
            cat "$out/bench_smoke_memcg.err"
            fail=1
        fi
    done
    rmdir "$memcg"
else
    echo "note: no memory cgroup could be made here: the cgroup limit not tried"
fi
# --overcommit-demo is refused without root; never run here, as root it
# changes a system setting for a moment.
if [ "$(id -u)" -ne 0 ]; then
    "$fl" bench heap --overcommit-demo >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: --overcommit-demo as non-root exited $rc, expected 2"
        fail=1
    fi
fi

"$fl" bench nosuchsuite >/dev/null 2>&1
rc=$?
if [ $rc -ne 2 ]; then
    echo "FAIL: unknown suite exited $rc, expected 2"
    fail=1
fi

# The rows keep the text's precision: a loop's deviation of 0.0003 s is
# not written as 0.000, nor a call's ns as 0.001 us.
if grep -q ',0\.000,\|,0\.000$' "$out/bench_smoke_loop.csv"; then
    echo "FAIL: bench loop: a number cut to three decimals in the CSV"
    head -3 "$out/bench_smoke_loop.csv"
    fail=1
fi
# A suite that needs every CPU still refuses a CPU it may not use.
for s in "threads -n 1" "launch -n 1" "worker --heap 4 --records 20000 -r 1"; do
    # shellcheck disable=SC2086
    "$fl" bench $s --cpu 1023 >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        echo "FAIL: forkless bench $s --cpu 1023 exited $rc, expected 2"
        fail=1
    fi
done
# One file for --json and --csv is refused before anything runs, as a
# usage error.
"$fl" bench loop -n 1 -r 1 --json "$out/bench_same" --csv "$out/bench_same" \
    >/dev/null 2>"$out/bench_same.err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q 'same file' "$out/bench_same.err"; then
    echo "FAIL: --json and --csv on one file: exit $rc"
    cat "$out/bench_same.err"
    fail=1
fi
# A write error is reported with its own errno.
if [ -w /dev/full ]; then
    "$fl" bench launch --targets tiny --heap 0 -n 1 --spawns 2 --pipelines 1 --json /dev/full \
        >/dev/null 2>"$out/bench_full.err"
    rc=$?
    if [ $rc -eq 0 ] || ! grep -q 'No space left' "$out/bench_full.err"; then
        echo "FAIL: --json /dev/full: exit $rc"
        cat "$out/bench_full.err"
        fail=1
    fi
fi
# A --help that is an option's value names a file: the suite runs, pinned,
# and prints no help.
rm -rf "$out/bench_help_value" && mkdir "$out/bench_help_value" &&
(cd "$out/bench_help_value" && "$fl" bench loop -n 1 -r 1 --json --help) \
    >"$out/bench_help_value.txt" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -q 'Options of every suite' "$out/bench_help_value.txt" ||
    ! grep -q '^cpu: CPU [0-9]* (pinned' "$out/bench_help_value.txt" ||
    [ ! -s "$out/bench_help_value/--help" ]; then
    echo "FAIL: bench loop --json --help: exit $rc"
    cat "$out/bench_help_value.txt"
    fail=1
fi
# A --help after a short option with its value attached is the help.
"$fl" bench loop -n1 --help >"$out/bench_help_attached.txt" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q 'Options of every suite' "$out/bench_help_attached.txt" ||
    grep -q '^cpu: ' "$out/bench_help_attached.txt"; then
    echo "FAIL: bench loop -n1 --help: exit $rc"
    cat "$out/bench_help_attached.txt"
    fail=1
fi
# A usage error before a --help is the error alone.
"$fl" bench heap -n 0 --help >"$out/bench_help_after_error.txt" 2>/dev/null
rc=$?
if [ $rc -ne 2 ] || [ -s "$out/bench_help_after_error.txt" ]; then
    echo "FAIL: bench heap -n 0 --help: exit $rc, printed:"
    cat "$out/bench_help_after_error.txt"
    fail=1
fi
# all takes --quick, which every suite takes.
"$fl" bench all --quick --help >/dev/null 2>&1 ||
    { echo "FAIL: bench all --quick --help"; fail=1; }
# sandbox: a run where no forkless arm can run fails; an arm that did not
# run reads "not measured", never nan.
"$fl" bench sandbox -n 2 --heap 0 --target /bin/false >"$out/bench_sandbox_false.txt" 2>&1
rc=$?
if [ $rc -ne 1 ] || ! grep -q 'nothing to measure' "$out/bench_sandbox_false.txt"; then
    echo "FAIL: bench sandbox --target /bin/false: exit $rc"
    cat "$out/bench_sandbox_false.txt"
    fail=1
fi
env PATH=/nonexistent "$fl" bench sandbox -n 2 --heap 0,8 --case ns \
    >"$out/bench_sandbox_nopath.txt" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'no forkless arm can run' "$out/bench_sandbox_nopath.txt"; then
    echo "skip: bench sandbox --case ns: no user namespaces here"
elif [ $rc -ne 0 ] || grep -Eqi '(^|[^a-z])x?-?(nan|inf)([^a-z]|$)' "$out/bench_sandbox_nopath.txt" ||
    ! grep -q 'unshare_cmd not measured' "$out/bench_sandbox_nopath.txt"; then
    echo "FAIL: bench sandbox without unshare and bwrap: exit $rc"
    cat "$out/bench_sandbox_nopath.txt"
    fail=1
fi
# bench all names each item of --suites that is wrong.
"$fl" bench all --suites heap,heap >/dev/null 2>"$out/bench_all_twice.err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q 'names "heap" twice' "$out/bench_all_twice.err"; then
    echo "FAIL: bench all --suites heap,heap: exit $rc"
    cat "$out/bench_all_twice.err"
    fail=1
fi
"$fl" bench all --suites heap,nope >/dev/null 2>"$out/bench_all_nope.err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q '"nope" is not a suite' "$out/bench_all_nope.err"; then
    echo "FAIL: bench all --suites heap,nope: exit $rc"
    cat "$out/bench_all_nope.err"
    fail=1
fi
# A cell too short for one spawn still makes one: no rate of 0.
"$fl" bench threads --seconds 0.000001 --targets tiny --heap 0 --threads 1 -r 1 \
    --arms forkless >"$out/bench_threads_short.txt" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -Eqi '(^|[^a-z])x?-?nan([^a-z]|$)|median  *0 ' "$out/bench_threads_short.txt"; then
    echo "FAIL: bench threads with a tiny --seconds: exit $rc"
    cat "$out/bench_threads_short.txt"
    fail=1
fi
# JSON stays UTF-8 whatever bytes a path has.
if command -v python3 >/dev/null 2>&1; then
    bad=$(printf '%s/bench_\377tiny' "$out")
    cp "$(dirname "$fl")/../bench/tiny" "$bad" 2>/dev/null &&
        "$fl" bench loop -n 1 -r 1 --target "$bad" --json "$out/bench_utf8.json" >/dev/null 2>&1 &&
        python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
            "$out/bench_utf8.json" ||
        { echo "FAIL: bench loop: a target path that is not UTF-8 made bad JSON"; fail=1; }
fi
# One repeat has no spread: no "+-" in the text, null in the JSON (not 0).
"$fl" bench loop -n 1 -r 1 --json "$out/bench_one.json" >"$out/bench_one.txt" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -q '^loop .* +- ' "$out/bench_one.txt" ||
        ! grep -q '"stddev_s": null' "$out/bench_one.json" ||
        ! grep -q '"sem_s": null' "$out/bench_one.json"; then
    echo "FAIL: bench loop -r 1: exit $rc, a deviation printed for one repeat"
    cat "$out/bench_one.txt" "$out/bench_one.json"
    fail=1
fi
# A --csv that cannot be written leaves an older --json as it was.
printf '{"kept": true}\n' >"$out/bench_kept.json"
"$fl" bench heap -n 2 --heap 0 --arms forkless --json "$out/bench_kept.json" \
    --csv "$out/no such dir/x.csv" >/dev/null 2>"$out/bench_kept.err"
rc=$?
if [ $rc -eq 0 ] || [ "$(cat "$out/bench_kept.json")" != '{"kept": true}' ] ||
        ! grep -q -- '--csv ' "$out/bench_kept.err"; then
    echo "FAIL: bench heap with a --csv it cannot write: exit $rc, --json now $(cat "$out/bench_kept.json")"
    cat "$out/bench_kept.err"
    fail=1
fi
# A run that is interrupted leaves an older --json and --csv as they were:
# both are written whole at the end.
printf '{"kept": true}\n' >"$out/bench_cut.json"
printf 'kept\n' >"$out/bench_cut.csv"
"$fl" bench heap -n 100000 --heap 0 --arms forkless --json "$out/bench_cut.json" \
    --csv "$out/bench_cut.csv" >"$out/bench_cut.txt" 2>&1 &
cut=$!
for _ in $(seq 100); do [ -s "$out/bench_cut.txt" ] && break; sleep 0.1; done
sleep 0.5
kill -TERM "$cut"   # not INT: a background job of a script ignores it
wait "$cut"
rc=$?
if [ $rc -eq 0 ] || [ "$(cat "$out/bench_cut.json")" != '{"kept": true}' ] ||
        [ "$(cat "$out/bench_cut.csv")" != kept ]; then
    echo "FAIL: bench heap interrupted: exit $rc, --json now $(cat "$out/bench_cut.json"), --csv $(cat "$out/bench_cut.csv")"
    cat "$out/bench_cut.txt"
    fail=1
fi
# So does a run that fails before its first row (a --reserve that an
# address-space limit refuses).
printf '{"kept": true}\n' >"$out/bench_cut.json"
(ulimit -v 4000000 && "$fl" bench heap --quick --heap 0 --reserve 100 \
    --json "$out/bench_cut.json" --csv "$out/bench_cut.csv") >/dev/null 2>&1
rc=$?
if [ $rc -eq 0 ] || [ "$(cat "$out/bench_cut.json")" != '{"kept": true}' ] ||
        [ "$(cat "$out/bench_cut.csv")" != kept ]; then
    echo "FAIL: bench heap failing before a row: exit $rc, --json now $(cat "$out/bench_cut.json")"
    fail=1
fi
# And makes no file where there was none.
rm -f "$out/bench_none.json" "$out/bench_none.csv"
(ulimit -v 4000000 && "$fl" bench heap --quick --heap 0 --reserve 100 \
    --json "$out/bench_none.json" --csv "$out/bench_none.csv") >/dev/null 2>&1
if [ -e "$out/bench_none.json" ] || [ -e "$out/bench_none.csv" ]; then
    echo "FAIL: bench heap failing before a row left a new --json or --csv"
    fail=1
fi
# Nor does one that a signal interrupts: the files it made are removed,
# and it dies by that signal.
rm -f "$out/bench_sig.json" "$out/bench_sig.csv"
"$fl" bench heap -n 100000 --heap 0 --arms forkless --json "$out/bench_sig.json" \
    --csv "$out/bench_sig.csv" >"$out/bench_sig.txt" 2>&1 &
cut=$!
made=no
for _ in $(seq 100); do
    [ -e "$out/bench_sig.json" ] && [ -e "$out/bench_sig.csv" ] && made=yes && break
    sleep 0.1
done
kill -TERM "$cut"
wait "$cut"
rc=$?
if [ $made != yes ] || [ $rc -ne 143 ] || [ -e "$out/bench_sig.json" ] ||
        [ -e "$out/bench_sig.csv" ]; then
    echo "FAIL: bench heap ended by SIGTERM: files made before the run: $made, exit $rc" \
        "(143 expected), left: $(ls "$out"/bench_sig.* 2>&1)"
    fail=1
fi
# bench/plot draws one threads line per method and target: no line goes
# back along the x axis to join a second target's points.
if command -v python3 >/dev/null; then
    mkdir -p "$out/plot"
    rm -f "$out/plot/"*
    printf '%s\n' 'suite,method,target,threads,median_spawns_per_s' \
        'threads,forkless,tiny,1,4000' 'threads,forkless,/bin/true,1,1000' \
        'threads,forkless,tiny,2,7000' 'threads,forkless,/bin/true,2,1900' >"$out/plot/t.csv"
    "$src/plot" --threads "$out/plot/t.csv" --data-only --out "$out/plot" >/dev/null 2>&1
    got=$(cat "$out/plot/"threads*.dat 2>/dev/null | tr '\n' ' ')
    if [ "$got" != "1 4000 2 7000 1 1000 2 1900 " ] ||
            ! grep -q 'title "forkless (true)"' "$out/plot/threads.gp"; then
        echo "FAIL: bench/plot --threads with two targets: points $got"
        fail=1
    fi
else
    echo "SKIP: bench/plot: no python3 to read the CSVs"
fi
# On a machine with little memory (here a memory cgroup of 900 MiB), a
# plain run leaves out the default heaps that do not fit, saying so,
# rather than refuse the run; a --heap given is still refused.
cgmem= lim=
v1=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' /proc/self/cgroup 2>/dev/null)
v2=$(sed -n 's/^0:://p' /proc/self/cgroup 2>/dev/null)
if [ -n "$v1" ] && [ -w "/sys/fs/cgroup/memory$v1" ]; then
    cgmem=/sys/fs/cgroup/memory${v1%/}/fl-smoke-$$ lim=memory.limit_in_bytes
elif grep -qw memory "/sys/fs/cgroup${v2%/}/cgroup.subtree_control" 2>/dev/null; then
    cgmem=/sys/fs/cgroup${v2%/}/fl-smoke-$$ lim=memory.max
fi
if [ -n "$cgmem" ] && mkdir "$cgmem" 2>/dev/null; then
    echo $((900 * 1024 * 1024)) >"$cgmem/$lim"
    in_cg() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cgmem" "$@"; }
    in_cg "$fl" bench heap -n 2 --arms forkless --target tiny --json "$out/bench_small.json" \
        >"$out/bench_small.txt" 2>"$out/bench_small.err"
    rc=$?
    in_cg "$fl" bench heap -n 2 --arms forkless --target tiny --heap 0,1024 \
        >/dev/null 2>"$out/bench_small_given.err"
    rc_given=$?
    # A suite of one default heap runs with 0 in its place.
    in_cg "$fl" bench threads --quick --targets tiny >"$out/bench_small_threads.txt" \
        2>"$out/bench_small_threads.err"
    rc_threads=$?
    # `bench all` runs its suites in one process: what one left out is not
    # said by the next.
    in_cg "$fl" bench all --suites threads,loop --out "$out/bench_small_all" \
        >"$out/bench_small_all.txt" 2>&1
    rc_all=$?
    rmdir "$cgmem"
    if [ $rc_all -ne 0 ] || ! grep -q '"left_out_for_memory": *"--heap' "$out/bench_small_all/threads.json" ||
            ! grep -q '"left_out_for_memory": *null' "$out/bench_small_all/loop.json"; then
        echo "FAIL: bench all in 900 MiB: exit $rc_all, or loop said what threads left out"
        cat "$out/bench_small_all.txt"
        fail=1
    fi
    # The report itself, not only stderr, says which heaps its verdicts
    # leave out, and so does the JSON.
    if [ $rc_threads -ne 0 ] || ! grep -q -- '--heap 0 in its place' "$out/bench_small_threads.err" ||
            ! grep -q -- '^left out of the defaults for want of memory: --heap [0-9]* (needs .*, 0 in its place$' \
                "$out/bench_small_threads.txt"; then
        echo "FAIL: bench threads in 900 MiB: exit $rc_threads"
        cat "$out/bench_small_threads.err" "$out/bench_small_threads.txt"
        fail=1
    fi
    if [ $rc -ne 0 ] || ! grep -q -- '--heap 1024 left out of the defaults' "$out/bench_small.err" ||
            ! grep -q -- '--heap 4096 left out of the defaults' "$out/bench_small.err" ||
            ! grep -q '^heap  *0 MiB' "$out/bench_small.txt" || [ $rc_given -ne 2 ] ||
            ! grep -q -- '^left out of the defaults for want of memory: --heap 1024 (needs [0-9]* MiB, [0-9]* MiB free); --heap 4096 ' \
                "$out/bench_small.txt" ||
            ! grep -q '"left_out_for_memory": *"--heap 1024 (needs' "$out/bench_small.json"; then
        echo "FAIL: bench heap in 900 MiB: exit $rc (given --heap: $rc_given)"
        cat "$out/bench_small.err" "$out/bench_small.txt" "$out/bench_small.json"
        fail=1
    fi
else
    echo "SKIP: bench heap with little memory: no memory cgroup to make here"
fi
# A --target given through a symlink keeps its name: a program that reads
# its argv[0] (one binary for many commands) must see it.
printf '#!/bin/sh\ncase ${0##*/} in true) exit 0 ;; *) exit 1 ;; esac\n' >"$out/bench_multicall"
chmod +x "$out/bench_multicall"
ln -sf "$out/bench_multicall" "$out/true"
if ! "$fl" bench heap -n 2 --heap 0 --arms forkless,posix_spawn --target "$out/true" \
        >"$out/bench_multicall.txt" 2>&1; then
    echo "FAIL: bench heap --target through a symlink: the program did not see its name"
    cat "$out/bench_multicall.txt"
    fail=1
fi
# A worker whose bench is killed mid-run ends too: it does not spin on as
# an orphan. Both kinds of worker process: fork, and fl-worker exec'd.
for arm in fork fork_exec; do
    "$fl" bench worker --arms $arm --heap 0 -r 1 --records 4000000000 >/dev/null 2>&1 &
    bench=$!
    worker=
    for i in $(seq 100); do
        worker=$(awk -v b=$bench '$4 == b { print $1; exit }' /proc/[0-9]*/stat 2>/dev/null)
        [ -n "$worker" ] && break
        sleep 0.1
    done
    kill -KILL $bench
    wait $bench 2>/dev/null
    if [ -z "$worker" ]; then
        echo "FAIL: bench worker --arms $arm started no worker"
        fail=1
        continue
    fi
    for i in $(seq 100); do
        kill -0 "$worker" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$worker" 2>/dev/null; then
        echo "FAIL: bench worker --arms $arm: the worker outlived its bench"
        kill -KILL "$worker"
        fail=1
    fi
done
exit $fail
