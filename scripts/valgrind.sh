#!/usr/bin/env bash
# Runs test cases under valgrind memcheck with the fork backend.
#
#   scripts/valgrind.sh [BUILD_DIR] [AREA...]
#       BUILD_DIR  a plain build (no sanitizers) with the tests; configured
#                  and built here when missing. Default: build-valgrind.
#       AREA       test areas (tests/test_<area>.c). Default: all areas.
#
# Why only the fork backend: valgrind runs the program on a synthetic CPU
# and supports clone() only with CLONE_THREAD (threads) or without
# CLONE_VM (fork). The clone backend's clone3(CLONE_VM|CLONE_VFORK) child
# and glibc's posix_spawn (clone(CLONE_VM|CLONE_VFORK)) are neither, so
# valgrind cannot run them. With the fork backend, everything the parent
# does (planning, pipes, errors, waiting, handles, the fd map) is checked.
#
# Left out, with reasons:
#  - cases labelled stress: thousands of spawns, 20-50x slower under
#    valgrind, and they test races that valgrind serialises anyway;
#  - cases that spawn with the clone backend themselves whatever the
#    backend under test (FL_BACKEND_AUTO, or t_rerun_as_nobody() when run
#    as root): valgrind stops with "Unsupported clone() flags"; and
#    handles.posix_spawn_runs_a_script_with_shell_fallback, which uses the
#    posix_spawn backend itself: valgrind runs glibc's
#    clone(CLONE_VM|CLONE_VFORK) as a plain fork, so what the child writes
#    for the parent (the exec error that starts the /bin/sh retry) is lost;
#  - cases that set RLIMIT_NOFILE in the child: valgrind reserves fds at
#    the top of the limit and refuses (EPERM) to let the program change
#    the hard limit, so the case sees EPERM instead of what it checks.
#  Valgrind 3.19 passes clone()'s CLONE_PIDFD through, so the fork
#  backend's handles have their pidfd as natively; it does not know
#  pidfd_open (434) or pidfd_send_signal (424, "unhandled syscall",
#  ENOSYS), so FL_NO_PIDFD calls and fl_kill() run their fallbacks here.
#  (SKIP_CASES below; VALGRIND_SKIP_CASES replaces the list.)
#
# Each case must end with no memcheck error and no definitely-lost block
# (--errors-for-leak-kinds=definite); the framework keeps its own
# allocations until exit (t_keep), which are "still reachable".
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-valgrind}
shift || true
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind missing (apt-get install valgrind)" >&2; exit 2; }

if [ ! -x "$build/tests/test_env" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug >/dev/null
  targets=(fl_probe)
  for src in tests/test_*.c; do targets+=("$(basename "$src" .c)"); done
  cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"
fi

areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
  for src in tests/test_*.c; do a=$(basename "$src" .c); areas+=("${a#test_}"); done
fi

# Cases that spawn through the clone backend on their own (see above).
SKIP_CASES=${VALGRIND_SKIP_CASES-errors.dup_to_a_child_fd_above_the_nofile_limit_names_the_fd errors.rlimit_soft_above_hard_names_its_index errors.rlimit_above_what_is_allowed_is_eperm handles.auto_backend_is_clone handles.posix_spawn_runs_a_script_with_shell_fallback}

log=$build/valgrind
rm -rf "$log"; mkdir -p "$log"
list=$log/cases
: >"$list"
for area in "${areas[@]}"; do
  src=tests/test_$area.c
  [ -f "$src" ] || { echo "valgrind.sh: no $src" >&2; exit 2; }
  # TEST(name) lines; stress cases are marked /* stress */ on that line.
  grep -E '^TEST\(' "$src" | grep -vE '/\* *stress *\*/' |
    sed -E 's/^TEST\(([A-Za-z0-9_]+)\).*/\1/' |
    while read -r c; do
      case " $SKIP_CASES " in *" $area.$c "*) continue ;; esac
      echo "$area $c"
    done >>"$list"
done

run_one() {
  area=$1 c=$2 build=$3 log=$4
  out=$log/$area.$c.log
  set +e
  FL_TEST_TIMEOUT=300 valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    --track-fds=no --child-silent-after-fork=yes \
    "$build/tests/test_$area" "$c" fork >"$out" 2>&1
  rc=$?
  set -e
  if [ $rc -eq 0 ]; then echo "PASS $area.$c"
  elif [ $rc -eq 77 ]; then echo "SKIP $area.$c"
  else echo "FAIL $area.$c (rc=$rc, log $out)"; fi
}
export -f run_one
n=$(wc -l <"$list")
echo "valgrind.sh: $n cases, fork backend, ${JOBS:-2} at a time"
xargs -P"${JOBS:-2}" -L1 bash -c 'run_one "$0" "$1" '"'$build'"' '"'$log'" <"$list" | tee "$log/summary"
fails=$(grep -c '^FAIL' "$log/summary" || true)
echo "valgrind.sh: $(grep -c '^PASS' "$log/summary" || true) passed," \
  "$(grep -c '^SKIP' "$log/summary" || true) skipped, $fails failed"
if [ "$fails" -ne 0 ]; then
  for f in $(grep '^FAIL' "$log/summary" | sed -E 's/.*log (.*)\)$/\1/'); do
    echo "---- $f"; tail -40 "$f"
  done
  exit 1
fi
