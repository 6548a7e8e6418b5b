#!/bin/bash
# cli_test.sh CASE FORKLESS: one test of `forkless run`, named CASE.
#
# Each case_NAME function below is one CTest test (tests/cli/CMakeLists.txt
# finds them by that prefix). A case exits 0 to pass, 1 to fail and 77 to
# skip. Cases assert behaviour, never durations: they must pass on a busy
# machine. Where a case waits for something, the wait is a generous upper
# bound against a hang, not a measurement.
set -u

# The tools, the script's and those the cases run by name (sh, cat,
# sleep), come from the system's standard PATH, whatever PATH the suite
# was started with (see scripts/std-path.sh); a case about the PATH search
# sets the one it needs.
. "${0%/*}/../../scripts/std-path.sh"

CASE=${1:?usage: cli_test.sh CASE FORKLESS}
FL=${2:?usage: cli_test.sh CASE FORKLESS}
case $FL in /*) ;; *) FL=$PWD/$FL ;; esac  # cases may cd
# A TMPDIR that is not a directory must not make every case share "/out".
tmp=${TMPDIR:-/tmp}
[ -d "$tmp" ] || tmp=/tmp
case $tmp in /*) ;; *) tmp=$PWD/$tmp ;; esac  # cases cd
T=$(mktemp -d "$tmp/forkless-cli.XXXXXX" 2>/dev/null || mktemp -d /tmp/forkless-cli.XXXXXX) ||
    { echo "cli_test.sh: mktemp -d in $tmp and in /tmp failed" >&2; exit 1; }
# The cases run scripts they write under $T: where its file system is
# mounted noexec (as hardened systems mount /tmp), they work in the first
# of /var/tmp and /dev/shm that is not.
printf '#!/bin/sh\n' >"$T/can-exec" && chmod 755 "$T/can-exec"
if ! "$T/can-exec" 2>/dev/null; then
    for tmp in /var/tmp /dev/shm; do
        d=$(mktemp -d "$tmp/forkless-cli.XXXXXX" 2>/dev/null) || continue
        printf '#!/bin/sh\n' >"$d/can-exec" && chmod 755 "$d/can-exec"
        if "$d/can-exec" 2>/dev/null; then rm -rf "$T"; T=$d; break; fi
        rm -rf "$d"
    done
fi
rm -f "$T/can-exec"
BACKGROUND_PIDS=()
CLEAN_DIRS=()  # removed at the end, with $T

cleanup() {
    local pid
    for pid in "${BACKGROUND_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$T" "${CLEAN_DIRS[@]}" ${FL_ANYONE_DIR:+"$FL_ANYONE_DIR"}
}
trap cleanup EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
skip() { echo "SKIP [$CASE]: $*" >&2; exit 77; }

# run_fl ARGS...: runs forkless, keeping its status in $STATUS and its
# output in $T/out and $T/err.
run_fl() {
    "$FL" "$@" >"$T/out" 2>"$T/err"
    STATUS=$?
}
out() { cat "$T/out"; }
err() { cat "$T/err"; }

expect_status() {
    [ "$STATUS" -eq "$1" ] ||
        fail "exit status $STATUS, expected $1; stdout: $(out); stderr: $(err)"
}
expect_out() {
    [ "$(out)" = "$1" ] || fail "stdout \"$(out)\", expected \"$1\"; stderr: $(err)"
}
expect_err_has() {
    grep -qF -- "$1" "$T/err" || fail "stderr lacks \"$1\": $(err)"
}
expect_err_empty() {
    [ ! -s "$T/err" ] || fail "stderr not empty: $(err)"
}
expect_file() {
    [ "$(cat "$1")" = "$2" ] || fail "$1 holds \"$(cat "$1" 2>&1)\", expected \"$2\"; stderr: $(err)"
}

# backend_opts B: the options that select backend B. The posix_spawn
# backend needs --keep-fds where the libc has no closefrom file action.
backend_opts() {
    echo --backend "$1"
    [ "$1" != posix_spawn ] || [ "${FL_POSIX_SPAWN_CLOSES_FDS:-1}" = 1 ] || echo --keep-fds
}

# wait_for COMMAND...: retries COMMAND until it succeeds; fails after 20 s.
wait_for() {
    local i
    for ((i = 0; i < 400; i++)); do
        "$@" && return 0
        sleep 0.05
    done
    fail "timed out waiting for: $*"
}
file_has_pid() { [ -s "$1" ] && grep -q '^[0-9][0-9]*$' "$1"; }
# A process that is gone or a zombie is dead: its reaper may be slow.
is_dead() {
    local state
    state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 0
    [ -z "$state" ] || [ "$state" = Z ]
}
is_alive() { ! is_dead "$1"; }

# expect_bad_option ARGS...: forkless rejects the command line with 125
# and a message, and runs nothing.
expect_bad_option() {
    run_fl "$@"
    expect_status 125
    expect_err_has "forkless: "
    [ ! -s "$T/out" ] || fail "ran something: $(out)"
}

stat_field() {  # stat_field N: field N of $T/out, a /proc/PID/stat line
    sed 's/^[0-9]* (.*) //' "$T/out" | awk -v n="$1" '{ print $(n - 2) }'
}
stat_pid() { awk '{ print $1 }' "$T/out"; }

# ---------------------------------------------------------------- exit codes

case_exit_0() {
    run_fl run -- true
    expect_status 0
    expect_err_empty
}

case_exit_status_passed_through() {
    run_fl run -- sh -c 'exit 42'
    expect_status 42
    expect_err_empty
}

case_argument_list_too_long_is_126_or_127() {
    # As env(1) and timeout(1): exec's E2BIG is 126, and 127 where the
    # program is not there either.
    local a
    a=$(head -c 100000 /dev/zero | tr '\0' x)
    run_fl run --rlimit STACK=131072 -- true "$a" "$a"
    expect_status 126
    expect_err_has 'Argument list too long'
    run_fl run --rlimit STACK=131072 -- fl-no-such-program "$a" "$a"
    expect_status 127
    # Too big by the environment alone: still 127 for a missing program.
    BIG_A=$a BIG_B=$a run_fl run --rlimit STACK=131072 -- fl-no-such-program
    expect_status 127
}

case_exit_signal() {
    run_fl run -- sh -c 'kill -USR1 $$'
    expect_status $((128 + 10))
    run_fl run -- sh -c 'kill -KILL $$'
    expect_status $((128 + 9))
}

# wait_status FILE COMMAND...: runs COMMAND under a parent that waits for
# it, and writes how it ended to FILE: "exit N", or "signal N" (with
# " core" after a core dump). A shell's $? cannot tell 128+N from a death
# by signal N.
wait_status() {
    local file=$1
    shift
    command -v perl >/dev/null || skip "no perl to see how a process ended"
    perl -e 'my $f = shift; system { $ARGV[0] } @ARGV; my $s = $?;
        open(my $o, ">", $f) or die "$f: $!";
        print $o ($s == -1 ? "not run" : $s & 127 ? "signal " . ($s & 127) . ($s & 128 ? " core" : "")
                  : "exit " . ($s >> 8)), "\n"' "$file" "$@" >"$T/out" 2>"$T/err"
}

case_exit_signal_dies_by_it() {
    # As env(1) and timeout(1), forkless dies by the child's signal, so a
    # parent that waits sees WIFSIGNALED; an exit status stays one.
    wait_status "$T/how" "$FL" run -- sh -c 'kill -USR1 $$'
    expect_file "$T/how" "signal 10"
    wait_status "$T/how" "$FL" run -- sh -c 'kill -KILL $$'
    expect_file "$T/how" "signal 9"
    wait_status "$T/how" "$FL" run -- sh -c 'exit 138'
    expect_file "$T/how" "exit 138"
}

case_exit_signal_no_core_of_our_own() {
    # The child dumps core (or would); forkless dies by the same signal
    # without a core dump of its own, whatever its RLIMIT_CORE.
    ulimit -c unlimited 2>/dev/null || skip "cannot raise RLIMIT_CORE to unlimited"
    cd "$T" || fail "cd $T"
    wait_status "$T/how" "$FL" run --rlimit CORE=0 -- sh -c 'kill -SEGV $$'
    expect_file "$T/how" "signal 11"
    wait_status "$T/how" "$FL" run --rlimit CORE=0 -- sh -c 'kill -QUIT $$'
    expect_file "$T/how" "signal 3"
}

case_exit_124_timeout() {
    run_fl run --timeout 0.2 -- sleep 100
    expect_status 124
}

case_timeout_ends_a_setup_that_waits() {
    # The child's open() of a FIFO with no writer waits before the exec:
    # the timeout covers it, as timeout(1)'s covers a shell's redirection.
    mkfifo "$T/fifo"
    run_fl run --timeout 0.3 --stdin "$T/fifo" -- cat
    expect_status 124
}

case_timeout_ends_a_setup_that_waits_with_a_best_effort_setting() {
    # A setting whose failure is reported (--best-effort) makes forkless
    # wait for nothing more than another run does: the report comes at
    # the end, and the timeout still covers the setup.
    mkfifo "$T/fifo"
    run_fl run --best-effort --nice 5 --timeout 0.3 --stdin "$T/fifo" -- cat
    expect_status 124
}

has_a_child() { [ -n "$(cat "/proc/$1/task/$1/children" 2>/dev/null)" ]; }

case_signal_to_forkless_ends_a_setup_that_waits() {
    # forkless passes SIGTERM on to a child still in its setup (an open()
    # of a FIFO), which ends by it, and forkless with it.
    mkfifo "$T/fifo"
    "$FL" run --stdin "$T/fifo" -- cat >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for has_a_child "$fl_pid"
    kill -TERM "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 143
}

case_exit_125_chdir() {
    run_fl run -C /nonexistent-dir -- true
    expect_status 125
    expect_err_has 'forkless: chdir "/nonexistent-dir": No such file or directory'
}

case_exit_125_open() {
    run_fl run --stdout /nonexistent-dir/out -- true
    expect_status 125
    expect_err_has 'open "/nonexistent-dir/out": No such file or directory'
}

case_exit_126_no_permission() {
    printf '#!/bin/sh\necho ran\n' >"$T/prog"
    chmod 644 "$T/prog"
    run_fl run -- "$T/prog"
    expect_status 126
    expect_err_has "exec \"$T/prog\": Permission denied"
    [ ! -s "$T/out" ] || fail "it ran"
}

case_exit_126_directory() {
    run_fl run -- "$T"
    expect_status 126
    expect_err_has "exec \"$T\""
}

case_exit_126_no_shebang() {
    printf 'echo ran\n' >"$T/script"
    chmod 755 "$T/script"
    run_fl run -- "$T/script"
    expect_status 126
    expect_err_has "exec \"$T/script\": Exec format error"
}

# The library's hints name its flags (FL_SHELL_FALLBACK, FL_NO_PIDFD);
# the command line says its own options, or what the cause is.
case_error_hints_name_cli_options() {
    printf 'echo ran\n' >"$T/script"
    chmod 755 "$T/script"
    run_fl run -- "$T/script"
    expect_status 126
    expect_err_has "no #! line; --shell-fallback runs it with /bin/sh)"
    ! grep -q FL_ "$T/err" || fail "names a library flag: $(err)"
    run_fl pipe "$T/script" ::: cat
    expect_status 126
    expect_err_has "no #! line)"
    ! grep -q -e FL_ -e --shell-fallback "$T/err" || fail "pipe has no such option: $(err)"
    # fd 3 for the signalfd, none left for the program's pidfd.
    bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done
        ulimit -n 4 || exit 99
        exec "$0" run -- true' "$FL" >"$T/out" 2>"$T/err"
    STATUS=$?
    [ "$STATUS" -ne 99 ] || skip "cannot lower RLIMIT_NOFILE"
    expect_status 125
    expect_err_has "RLIMIT_NOFILE"
    ! grep -q FL_ "$T/err" || fail "names a library flag: $(err)"
}

# At the fd limit the fork backend first wants its error pipe: the message
# names that, not the pidfd.
case_fd_limit_names_the_fork_backend_s_error_pipe() {
    bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done
        ulimit -n 4 || exit 99
        exec "$0" run --backend fork -- true' "$FL" >"$T/out" 2>"$T/err"
    STATUS=$?
    [ "$STATUS" -ne 99 ] || skip "cannot lower RLIMIT_NOFILE"
    expect_status 125
    expect_err_has "error pipe"
    ! grep -q pidfd "$T/err" || fail "names the pidfd: $(err)"
}

# The cause stays the library's: here a #! line, but one too long for the
# kernel to read.
case_exit_126_shebang_too_long_says_so() {
    { printf '#!/'; printf 'a%.0s' $(seq 300); printf '\necho ran\n'; } >"$T/script"
    chmod 755 "$T/script"
    run_fl run -- "$T/script"
    expect_status 126
    expect_err_has "#! line too long for the kernel"
    expect_err_has "; --shell-fallback runs it with /bin/sh)"
    ! grep -q -e FL_ -e "no #! line" "$T/err" || fail "says the wrong cause: $(err)"
}

case_exit_126_missing_interpreter() {
    # The program is found; its #! interpreter is not: the program cannot
    # be executed (126), it is not "not found" (127).
    printf '#!/nonexistent/interpreter\n' >"$T/script"
    chmod 755 "$T/script"
    run_fl run -- "$T/script"
    expect_status 126
    expect_err_has "exec \"$T/script\""
}

case_exit_126_missing_loader() {
    # A copy of /bin/true whose ELF loader's name ends in X instead: found,
    # but exec says ENOENT for the loader. 126, naming it.
    local hit loader off
    hit=$(head -c 4096 /bin/true | grep -aoE '/[[:alnum:]_./-]*/ld[-.][[:alnum:]_.-]*' -b | head -n 1)
    [ -n "$hit" ] || skip "/bin/true names no dynamic loader in its first 4 KiB"
    off=${hit%%:*} loader=${hit#*:}
    cp /bin/true "$T/prog"
    printf X | dd of="$T/prog" bs=1 seek=$((off + ${#loader} - 1)) conv=notrunc 2>/dev/null
    run_fl run -- "$T/prog"
    expect_status 126
    expect_err_has "(dynamic loader \"${loader%?}X\" not found)"
}

case_exit_status_judges_a_long_path_by_its_whole_name() {
    # The error's path is cut at 1024 bytes; what was found is judged by the
    # whole name, whose cut may be another file. A missing program under a
    # 1,000-byte path whose cut is a directory: 127. A script whose
    # interpreter is missing, under a path whose cut is no file: 126.
    local dots="" i name
    for i in $(seq 520); do dots="$dots/."; done
    run_fl run -- "$T$dots/nosuch"
    expect_status 127
    run_fl pipe true ::: "$T$dots/nosuch"
    expect_status 127
    name=$(printf '%0200d' 0)
    mkdir -p "$T/$name/$name/$name/$name/$name/$name" || skip "cannot make a 1,200-byte path here"
    printf '#!/nonexistent/interpreter\n' >"$T/$name/$name/$name/$name/$name/$name/script"
    chmod 755 "$T/$name/$name/$name/$name/$name/$name/script"
    run_fl run -- "$T/$name/$name/$name/$name/$name/$name/script"
    expect_status 126
    run_fl pipe true ::: "$T/$name/$name/$name/$name/$name/$name/script"
    expect_status 126
}

case_exit_127_path() {
    run_fl run -- /nonexistent-dir/prog
    expect_status 127
    expect_err_has 'exec "/nonexistent-dir/prog": No such file or directory'
}

case_exit_127_search() {
    run_fl run -- forkless-no-such-program
    expect_status 127
    expect_err_has 'forkless: exec '
    expect_err_has 'forkless-no-such-program'
}

case_exit_127_empty_program() {
    # An empty name names no program: 127, as env '' gives.
    run_fl run -- ''
    expect_status 127
    expect_err_has 'the program name is empty'
    run_fl run --argv0 name --timeout 1h -- ''
    expect_status 127
}

case_exit_127_from_program() {
    # A program that itself exits 127 is told apart by the message.
    run_fl run -- sh -c 'exit 127'
    expect_status 127
    expect_err_empty
    run_fl run -- forkless-no-such-program
    expect_status 127
    expect_err_has 'forkless: '
}

# ------------------------------------------------------ directory, environment

case_chdir() {
    run_fl run -C "$T" -- pwd
    expect_status 0
    expect_out "$T"
    run_fl run --chdir "$T" -- pwd
    expect_out "$T"
}

case_chdir_relative_program() {
    mkdir "$T/sub"
    printf '#!/bin/sh\necho sub-ran\n' >"$T/sub/prog"
    chmod 755 "$T/sub/prog"
    run_fl run -C "$T/sub" -- ./prog
    expect_status 0
    expect_out sub-ran
}

case_env_set_again_keeps_its_place_as_env_does() {
    env -i A=0 "$FL" run Z=1 Y=2 Z=3 "$(command -v env)" >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    expect_out "$(env -i A=0 env Z=1 Y=2 Z=3 env)"
    expect_out "$(printf 'A=0\nZ=3\nY=2')"
}

case_env_set() {
    run_fl run -e FL_TEST_A=one --env FL_TEST_B=two -- sh -c 'echo "$FL_TEST_A $FL_TEST_B"'
    expect_status 0
    expect_out "one two"
}

case_env_unset() {
    FL_TEST_A=inherited run_fl run -- sh -c 'echo "${FL_TEST_A-unset}"'
    expect_out inherited
    FL_TEST_A=inherited run_fl run -u FL_TEST_A -- sh -c 'echo "${FL_TEST_A-unset}"'
    expect_status 0
    expect_out unset
    FL_TEST_A=inherited run_fl run --unset FL_TEST_A -- sh -c 'echo "${FL_TEST_A-unset}"'
    expect_out unset
}

case_env_last_edit_wins() {
    run_fl run -u FL_TEST_A -e FL_TEST_A=set -- sh -c 'echo "${FL_TEST_A-unset}"'
    expect_out set
    run_fl run -e FL_TEST_A=set -u FL_TEST_A -- sh -c 'echo "${FL_TEST_A-unset}"'
    expect_out unset
    run_fl run -e FL_TEST_A=1 -e FL_TEST_A=2 -- sh -c 'echo "$FL_TEST_A"'
    expect_out 2
}

case_env_clear() {
    run_fl run -i -- env
    expect_status 0
    expect_out ""
    run_fl run --clear-env -e FL_TEST_A=1 -- env
    expect_out "FL_TEST_A=1"
}

# As env(1): NAME=VALUE operands before the program set variables, after
# the options (the last word on a name wins); the first operand without
# '=' is the program, and what follows it is left alone.
case_env_operands() {
    run_fl run -i FOO=bar env
    expect_status 0
    expect_out FOO=bar
    run_fl run -i -e A=1 -u B -- A=2 B=3 env
    expect_status 0
    expect_out "$(printf 'A=2\nB=3')"
    run_fl run -i -- C=1 sh -c 'echo "$C" "$1"' sh D=2
    expect_status 0
    expect_out "1 D=2"
    run_fl run -i -e "PATH=/nonexistent" -- "PATH=$PATH" sh -c 'echo ok'
    expect_out ok
    expect_bad_option run A=1
    expect_err_has "no program given"
    expect_bad_option run =x true
    expect_err_has "the variable name is empty"
}

case_env_child_path_searched() {
    mkdir "$T/bin"
    printf '#!/bin/sh\necho found-in-child-path\n' >"$T/bin/forkless-test-prog"
    chmod 755 "$T/bin/forkless-test-prog"
    run_fl run -e "PATH=$T/bin" -- forkless-test-prog
    expect_status 0
    expect_out found-in-child-path
}

case_path_relative() {
    # Empty and relative PATH entries are skipped unless asked for; env(1)
    # searches them, relative to the directory the program runs in.
    mkdir -p "$T/dir/bin"
    printf '#!/bin/sh\necho relative-ran\n' >"$T/dir/bin/forkless-rel-prog"
    cp "$T/dir/bin/forkless-rel-prog" "$T/dir/forkless-rel-prog"
    chmod 755 "$T/dir/bin/forkless-rel-prog" "$T/dir/forkless-rel-prog"
    run_fl run -C "$T/dir" -e PATH=bin -- forkless-rel-prog
    expect_status 127
    run_fl run -C "$T/dir" --path-relative -e PATH=bin -- forkless-rel-prog
    expect_status 0
    expect_out relative-ran
    run_fl run -C "$T/dir" --path-relative -e PATH=/nonexistent: -- forkless-rel-prog
    expect_status 0
    expect_out relative-ran
    (cd "$T/dir" && env PATH=bin forkless-rel-prog) >"$T/env" 2>&1
    expect_file "$T/env" relative-ran
}

case_argv0() {
    # As exec -a: PROGRAM runs, found as usual, with NAME as argv[0].
    run_fl run --argv0 fancy-name -- cat /proc/self/cmdline
    expect_status 0
    [ "$(tr '\0' ' ' <"$T/out")" = "fancy-name /proc/self/cmdline " ] ||
        fail "argv: $(tr '\0' ' ' <"$T/out")"
    run_fl run -a my-sh -- sh -c 'echo "$0"'
    expect_status 0
    expect_out my-sh
    run_fl run --argv0 fancy-name -- forkless-no-such-program
    expect_status 127
    expect_err_has forkless-no-such-program
    expect_bad_option run --argv0
}

case_env_bad() {
    expect_bad_option run -e NOEQUALS -- true
    expect_bad_option run -e =value -- true
    expect_bad_option run -u A=B -- true
    expect_bad_option run -u '' -- true
}

# ------------------------------------------------------------------ files

case_stdin() {
    echo from-file >"$T/in"
    run_fl run --stdin "$T/in" -- cat
    expect_status 0
    expect_out from-file
}

# bash's process substitution names a pipe as /dev/fd/N.
case_stdin_from_process_substitution() {
    "$FL" run --stdin <(echo substituted) -- cat >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    expect_out substituted
}

# forkless's own fds must not fill the closed fd 1 that the child's
# stderr would copy.
case_stderr_to_stdout_with_stdout_closed_is_ebadf() {
    "$FL" run --stderr-to-stdout -- true >&- 2>"$T/err"
    STATUS=$?
    expect_status 125
    expect_err_has "Bad file descriptor"
}

case_stdout() {
    echo old-content-that-is-longer >"$T/o"
    run_fl run --stdout "$T/o" -- echo new
    expect_status 0
    expect_file "$T/o" new
}

case_stderr() {
    run_fl run --stderr "$T/e" -- sh -c 'echo to-err >&2; echo to-out'
    expect_status 0
    expect_out to-out
    expect_file "$T/e" to-err
}

case_append() {
    echo first >"$T/o"
    echo first-err >"$T/e"
    run_fl run --append --stdout "$T/o" --stderr "$T/e" -- sh -c 'echo second; echo second-err >&2'
    expect_status 0
    expect_file "$T/o" "$(printf 'first\nsecond')"
    expect_file "$T/e" "$(printf 'first-err\nsecond-err')"
}

case_append_without_a_file_is_refused() {
    # It says how the --stdout and --stderr files are opened: alone, it
    # would change nothing.
    expect_bad_option run --append -- true
    expect_err_has "--append needs --stdout or --stderr"
    expect_bad_option run --append --stdin /dev/null -- true
}

case_stderr_to_stdout() {
    run_fl run --stdout "$T/o" --stderr-to-stdout -- sh -c 'echo a; echo b >&2; echo c'
    expect_status 0
    expect_file "$T/o" "$(printf 'a\nb\nc')"
    run_fl run --stderr-to-stdout -- sh -c 'echo err >&2'
    expect_out err
    expect_err_empty
}

case_stderr_conflict() {
    expect_bad_option run --stderr "$T/e" --stderr-to-stdout -- true
}

case_stdio_relative_to_cwd() {
    # FILE paths are relative to where forkless runs, as a shell's
    # redirections are, not to -C DIR.
    mkdir "$T/here" "$T/there"
    (cd "$T/here" && "$FL" run -C "$T/there" --stdout out.txt -- echo hi)
    [ "$(cat "$T/here/out.txt" 2>/dev/null)" = hi ] || fail "out.txt not in the current directory"
    [ ! -e "$T/there/out.txt" ] || fail "out.txt went to the -C directory"
}

case_fd_map() {
    echo via-fd >"$T/data"
    exec 5<"$T/data"
    run_fl run --fd 7=5 -- sh -c 'cat <&7'
    expect_status 0
    expect_out via-fd
    exec 5<&-
}

case_fd_map_swap() {
    echo three >"$T/3"
    echo four >"$T/4"
    exec 8<"$T/3" 9<"$T/4"
    run_fl run --fd 8=9 --fd 9=8 -- sh -c 'cat <&8; cat <&9'
    expect_status 0
    expect_out "$(printf 'four\nthree')"
    exec 8<&- 9<&-
}

case_fd_map_stdio() {
    echo on-fd-zero >"$T/data"
    exec 5<"$T/data"
    run_fl run --fd 0=5 -- cat
    expect_out on-fd-zero
    exec 5<&-
}

# A map of fd 0-2 and the option that sets the same fd: refused, as
# --stderr with --stderr-to-stdout, not one of them dropped unsaid.
case_fd_map_stdio_conflict() {
    expect_bad_option run --stdout "$T/o" --fd 1=2 -- sh -c 'echo x'
    expect_err_has "--stdout and --fd 1=2 cannot be used together"
    [ ! -e "$T/o" ] || fail "$T/o was created"
    expect_bad_option run --stdin /dev/null --fd 0=2 -- true
    expect_err_has "--stdin and --fd 0=2"
    expect_bad_option run --fd 2=1 --stderr "$T/e" -- true
    expect_err_has "--stderr and --fd 2=1"
    expect_bad_option run --stderr-to-stdout --fd 2=1 -- true
    expect_err_has "--stderr-to-stdout and --fd 2=1"
    # Another fd, or stderr following a mapped stdout, is no conflict.
    run_fl run --stdout "$T/o" --fd 3=1 -- sh -c 'echo x'
    expect_status 0
    expect_file "$T/o" x
    run_fl run --fd 1=2 --stderr-to-stdout -- sh -c 'echo y >&2'
    expect_status 0
    expect_out ""
    [ "$(err)" = y ] || fail "stderr: $(err)"
}

case_fd_map_closed_parent() {
    exec 57<&- 2>/dev/null
    run_fl run --fd 7=57 -- true
    expect_status 125
    expect_err_has "57"
    expect_err_has "not open"
}

case_fd_map_child_fd_past_the_limit_names_the_option() {
    # The library's record names the child fd only; the message adds the
    # --fd that asked for it.
    run_fl run --fd 2147483647=1 -- true
    expect_status 125
    expect_err_has "child fd 2147483647 is not below RLIMIT_NOFILE"
    expect_err_has "(--fd 2147483647=1)"
}

case_fd_map_bad_syntax() {
    expect_bad_option run --fd 7 -- true
    expect_bad_option run --fd 7= -- true
    expect_bad_option run --fd =1 -- true
    expect_bad_option run --fd a=1 -- true
    expect_bad_option run --fd -1=1 -- true
    expect_bad_option run --fd 7=1x -- true
    expect_bad_option run --fd 99999999999=1 -- true
    expect_bad_option run --fd 7=1 --fd 7=2 -- true
}

case_fd_map_leading_zeros_on_either_side() {
    # As any other fd number: zeros in front change nothing, whatever their count.
    run_fl run --fd 0000000000000000007=00000000000000000001 -- sh -c 'echo x >&7'
    expect_status 0
    expect_out x
}

case_fds_closed_by_default() {
    exec 7</dev/null
    run_fl run -- ls /proc/self/fd
    expect_status 0
    ! grep -qx 7 "$T/out" || fail "fd 7 leaked into the child: $(out)"
    # 0, 1, 2, and the one ls opens for the directory.
    ! grep -qvx '[0-3]' "$T/out" || fail "unexpected fds in the child: $(out)"
}

case_keep_fds() {
    exec 7</dev/null
    run_fl run --keep-fds -- ls /proc/self/fd
    expect_status 0
    grep -qx 7 "$T/out" || fail "fd 7 not kept: $(out)"
}

# ----------------------------------------------------------------- process

sig_field() {  # sig_field NAME: the hex mask NAME (SigIgn, SigBlk) in $T/out
    awk -v name="$1:" '$1 == name { print $2 }' "$T/out"
}

case_signals_reset_by_default() {
    trap '' PIPE
    local backend
    for backend in auto clone fork posix_spawn; do
        run_fl run $(backend_opts $backend) -- cat /proc/self/status
        expect_status 0
        # glibc's posix_spawn leaves its internal signals 32 and 33 ignored
        # in the child; it is only asked about the others.
        local ignored=$((0x$(sig_field SigIgn)))
        [ $backend != posix_spawn ] || ignored=$((ignored & 0x7fffffff))
        [ $ignored -eq 0 ] || fail "$backend: ignored signals kept: SigIgn $(sig_field SigIgn)"
        [ $((0x$(sig_field SigBlk))) -eq 0 ] ||
            fail "$backend: signals blocked: SigBlk $(sig_field SigBlk)"
    done
}

case_ignored_sigchld_from_parent() {
    # Our parent ignores SIGCHLD, which would make the kernel discard the
    # status; forkless still reports it.
    trap '' CHLD
    run_fl run -- sh -c 'exit 6'
    expect_status 6
    run_fl run --timeout 1h -- sh -c 'exit 6'
    expect_status 6
}

case_keep_signals_sigchld_ignored() {
    # With --keep-signals the child keeps the ignored SIGCHLD, as asked,
    # while forkless resets its own: the status is not lost.
    trap '' CHLD
    run_fl run --keep-signals -- sh -c 'exit 6'
    expect_status 6
    run_fl run --keep-signals --timeout 1h -- sh -c 'exit 6'
    expect_status 6
    run_fl run --keep-signals -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigIgn) & (1 << (17 - 1)))) -ne 0 ] ||
        fail "SIGCHLD not kept ignored: SigIgn $(sig_field SigIgn)"
    # posix_spawn cannot give the child a SIG_IGN that its parent lacks.
    run_fl run --keep-signals --backend posix_spawn --keep-fds -- true
    expect_status 125
    expect_err_has "SIGCHLD was ignored"
}

case_keep_signals() {
    trap '' PIPE
    run_fl run --keep-signals -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigIgn) & (1 << (13 - 1)))) -ne 0 ] ||
        fail "SIGPIPE not kept ignored: SigIgn $(sig_field SigIgn)"
    # forkless blocks the signals it passes on; the child gets the mask
    # forkless was started with, the one a child of this shell gets.
    local ours
    ours=$(awk '$1 == "SigBlk:" { print $2 }' /proc/self/status)
    [ "$(sig_field SigBlk)" = "$ours" ] ||
        fail "forkless's own mask leaked: SigBlk $(sig_field SigBlk), expected $ours"
}

# sig_bit N: the bit of signal N in a SigIgn/SigBlk mask. (SIGRTMAX is 64
# in every libc, SIGRTMIN is not: 34 in glibc, 35 in musl.)
sig_bit() { echo $((1 << ($1 - 1))); }

case_ignore_signal() {
    run_fl run --ignore-signal PIPE,usr1 --ignore-signal=SIGRTMAX-1 -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigIgn))) -eq $(($(sig_bit 13) | $(sig_bit 10) | $(sig_bit 63))) ] ||
        fail "SigIgn $(sig_field SigIgn), expected PIPE, USR1 and RTMAX-1"
    # The last word on a signal wins; an empty item is nothing.
    run_fl run --ignore-signal ,PIPE, --default-signal PIPE --ignore-signal '' -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigIgn) & $(sig_bit 13))) -eq 0 ] || fail "PIPE still ignored"
    # Never SIG_IGN in the posix_spawn backend: refused, and said why.
    run_fl run --backend posix_spawn --keep-fds --ignore-signal PIPE -- true
    expect_status 125
    expect_err_has "(--ignore-signal)"
}

case_default_signal() {
    # With --keep-signals, --default-signal resets what is kept, and
    # unblocks it too, as env(1) does.
    trap '' PIPE USR1
    run_fl run --keep-signals --default-signal PIPE -- cat /proc/self/status
    expect_status 0
    local ign=$((0x$(sig_field SigIgn)))
    [ $((ign & $(sig_bit 13))) -eq 0 ] || fail "PIPE still ignored: SigIgn $(sig_field SigIgn)"
    [ $((ign & $(sig_bit 10))) -ne 0 ] || fail "USR1 not kept ignored: SigIgn $(sig_field SigIgn)"
    run_fl run --block-signal USR2,HUP --default-signal USR2 -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigBlk))) -eq "$(sig_bit 1)" ] || fail "SigBlk $(sig_field SigBlk), expected HUP only"
}

case_block_signal() {
    run_fl run --block-signal USR1,RTMAX --block-signal KILL -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigBlk))) -eq $(($(sig_bit 10) | $(sig_bit 64))) ] ||
        fail "SigBlk $(sig_field SigBlk), expected USR1 and RTMAX"
    # RTMIN is the libc's first free real-time signal; RTMIN+1 the next.
    run_fl run --block-signal RTMIN,rtmin+1 -- cat /proc/self/status
    expect_status 0
    local blk=$((0x$(sig_field SigBlk)))
    [ $blk -eq $(($(sig_bit 34) | $(sig_bit 35))) ] || [ $blk -eq $(($(sig_bit 35) | $(sig_bit 36))) ] ||
        fail "SigBlk $(sig_field SigBlk), expected RTMIN and RTMIN+1 (34 and 35, or 35 and 36)"
}

case_signal_options_as_env() {
    # The same settings as env(1) gives, where this env has them.
    env --ignore-signal=PIPE true 2>/dev/null || skip "env has no --ignore-signal here"
    env --ignore-signal=PIPE,USR1 --block-signal=USR2,RTMAX-2 --default-signal=HUP \
        cat /proc/self/status >"$T/env"
    run_fl run --keep-signals --ignore-signal PIPE,USR1 --block-signal USR2,RTMAX-2 \
        --default-signal HUP -- cat /proc/self/status
    expect_status 0
    local f
    for f in SigIgn SigBlk; do
        [ "$(sig_field $f)" = "$(awk -v n="$f:" '$1 == n { print $2 }' "$T/env")" ] ||
            fail "$f: forkless $(sig_field $f), env $(grep "^$f" "$T/env")"
    done
}

case_signal_options_bad() {
    local opt
    for opt in --default-signal --ignore-signal --block-signal; do
        expect_bad_option run $opt NOPE -- true
        expect_err_has "$opt: invalid signal \"NOPE\""
        expect_bad_option run $opt PIPE,0 -- true
        expect_err_has "$opt: invalid signal \"0\""
        expect_bad_option run $opt 65 -- true
        expect_bad_option run $opt RTMIN+99 -- true
        # A name too long for any signal gets the same help as any other.
        expect_bad_option run $opt PIPE,SIGNAL_NAME_LONGER_THAN_ANY_THERE_IS -- true
        expect_err_has "$opt: invalid signal \"SIGNAL_NAME_LONGER_THAN_ANY_THERE_IS\" (a name such as PIPE"
    done
    expect_bad_option run --ignore-signal KILL -- true
    expect_err_has "--ignore-signal KILL: SIGKILL and SIGSTOP cannot be ignored"
    expect_bad_option run --ignore-signal PIPE,STOP -- true
    expect_err_has "--ignore-signal STOP"
    expect_bad_option run --default-signal KILL -- true
    expect_err_has "--default-signal KILL"
}

case_default_same_group() {
    run_fl run -- cat /proc/self/stat
    expect_status 0
    [ "$(stat_field 5)" != "$(stat_pid)" ] || fail "child leads a group: $(out)"
}

case_setsid() {
    run_fl run --setsid -- cat /proc/self/stat
    expect_status 0
    [ "$(stat_field 5)" = "$(stat_pid)" ] || fail "not a group leader: $(out)"
    [ "$(stat_field 6)" = "$(stat_pid)" ] || fail "not a session leader: $(out)"
}

case_pgroup() {
    run_fl run --pgroup -- cat /proc/self/stat
    expect_status 0
    [ "$(stat_field 5)" = "$(stat_pid)" ] || fail "not a group leader: $(out)"
    [ "$(stat_field 6)" != "$(stat_pid)" ] || fail "a session leader: $(out)"
}

case_rlimit() {
    run_fl run --rlimit NOFILE=100 -- sh -c 'ulimit -Sn; ulimit -Hn'
    expect_status 0
    expect_out "$(printf '100\n100')"
    run_fl run --rlimit nofile=50:100 -- sh -c 'ulimit -Sn; ulimit -Hn'
    expect_out "$(printf '50\n100')"
    run_fl run --rlimit CORE=0 --rlimit Stack=unlimited -- sh -c 'ulimit -c; ulimit -s'
    expect_out "$(printf '0\nunlimited')"
}

case_rlimit_minus_one_is_unlimited_as_for_prlimit() {
    [ "$(ulimit -Ht)" = unlimited ] || skip "the CPU time hard limit here is not unlimited"
    run_fl run --rlimit CPU=-1 -- sh -c 'ulimit -St; ulimit -Ht'
    expect_status 0
    expect_out "$(printf 'unlimited\nunlimited')"
    run_fl run --rlimit CPU=-2 -- true
    expect_status 125
}

case_rlimit_the_number_of_rlim_infinity_is_unlimited_as_for_prlimit() {
    [ "$(ulimit -Hc)" = unlimited ] || skip "the core size hard limit here is not unlimited"
    run_fl run --rlimit CORE=0:18446744073709551615 -- sh -c 'ulimit -Hc'
    expect_status 0
    expect_out unlimited
    expect_bad_option run --rlimit CORE=18446744073709551616 -- true
    expect_err_has 'each a whole number'
}

case_rlimit_unknown_name() {
    expect_bad_option run --rlimit FOO=1 -- true
    expect_err_has "FOO"
    expect_bad_option run --rlimit =1 -- true
}

case_rlimit_bad_value() {
    expect_bad_option run --rlimit NOFILE -- true
    expect_bad_option run --rlimit NOFILE= -- true
    expect_bad_option run --rlimit NOFILE=abc -- true
    expect_bad_option run --rlimit NOFILE=-2 -- true
    expect_bad_option run --rlimit NOFILE=1:2:3 -- true
    expect_bad_option run --rlimit NOFILE=99999999999999999999999 -- true
}

case_rlimit_step_fails() {
    # soft above hard: the kernel refuses it in the child, before exec.
    run_fl run --rlimit CORE=0 --rlimit NOFILE=100:50 -- true
    expect_status 125
    expect_err_has "forkless: rlimit"
    expect_err_has "NOFILE=100:50"
}

# Soft above hard: said as prlimit(1) says it, with the values, also
# when the soft one is ours, kept ("NAME=:HARD").
case_rlimit_soft_above_hard_explained() {
    run_fl run --rlimit CORE=1:0 -- true
    expect_status 125
    expect_err_has "(--rlimit CORE=1:0: the soft limit 1 cannot exceed the hard limit 0)"
    ! grep -q "over the hard limit" "$T/err" || fail "said twice: $(err)"
    local soft
    soft=$(ulimit -Sn)
    [ "$soft" -gt 1 ] || skip "soft RLIMIT_NOFILE is $soft"
    run_fl run --rlimit "NOFILE=:$((soft - 1))" -- true
    expect_status 125
    expect_err_has "the soft limit $soft cannot exceed the hard limit $((soft - 1)))"
}

case_umask() {
    run_fl run --umask 027 -- sh -c umask
    expect_status 0
    expect_out 0027
    run_fl run --umask 0 -- sh -c umask
    expect_out 0000
}

case_run_a_stdio_file_that_cannot_be_opened_names_its_option() {
    # The message says which option, with the path as it was given (the
    # library's names it made absolute).
    run_fl run --stdout "$T/nodir/x" -- true
    expect_status 125
    expect_err_has "(--stdout $T/nodir/x)"
    run_fl run --stderr "$T/nodir/y" -- true
    expect_err_has "(--stderr $T/nodir/y)"
    run_fl run --stdin "$T/missing" -- true
    expect_err_has "(--stdin $T/missing)"
}

case_umask_takes_leading_zeros_as_a_shell_does() {
    run_fl run --umask 00000022 -- sh -c umask
    expect_status 0
    expect_out 0022
}

case_umask_bad() {
    expect_bad_option run --umask 999 -- true
    expect_bad_option run --umask abc -- true
    expect_bad_option run --umask 1777 -- true
    expect_bad_option run --umask '' -- true
    expect_bad_option run --umask -1 -- true
    expect_bad_option run --umask 000000001000 -- true
}

need_root_and_nobody() {
    [ "$(id -u)" -eq 0 ] || skip "not root"
    getent passwd nobody >/dev/null || skip "no user nobody"
}

# fl_for_anyone: sets FL_ANYONE to a copy of $FL that every user can
# execute. The build tree may sit where only its owner can search (a 0700
# home or mktemp -d directory); the copy is in a directory of /tmp (0755),
# removed at exit.
fl_for_anyone() {
    FL_ANYONE_DIR=$(mktemp -d /tmp/forkless-bin.XXXXXX) || fail "mktemp -d"
    chmod 755 "$FL_ANYONE_DIR" && cp "$FL" "$FL_ANYONE_DIR/forkless" &&
        chmod 755 "$FL_ANYONE_DIR/forkless" || fail "cannot copy $FL to /tmp"
    FL_ANYONE=$FL_ANYONE_DIR/forkless
}

case_user() {
    need_root_and_nobody
    run_fl run --user nobody -- sh -c 'id -u; id -g; id -G'
    expect_status 0
    expect_out "$(printf '%s\n%s\n%s' "$(id -u nobody)" "$(id -g nobody)" "$(id -G nobody)")"
}

case_user_sets_the_supplementary_groups_initgroups_would() {
    # The kernel's list, not id -G (which adds the gid it runs as): the
    # user's own group is in it, as setpriv --init-groups and runuser set.
    need_root_and_nobody
    local want
    want=$(id -G nobody | tr ' ' '\n' | sort -n | tr '\n' ' ')
    run_fl run --user nobody -- sh -c 'sed -n "s/^Groups:[[:space:]]*//p" /proc/self/status'
    expect_status 0
    [ "$(tr ' ' '\n' <"$T/out" | grep . | sort -n | tr '\n' ' ')" = "$want" ] ||
        fail "supplementary groups $(out), want $want"
}

case_user_numeric() {
    [ "$(id -u)" -eq 0 ] || skip "not root"
    getent passwd 54321 >/dev/null && skip "uid 54321 exists here"
    run_fl run --user 54321:54322 -- sh -c 'id -u; id -g; id -G'
    expect_status 0
    expect_out "$(printf '54321\n54322\n54322')"
    expect_bad_option run --user 54321 -- true  # no entry: GROUP needed
}

case_user_unknown() {
    expect_bad_option run --user forkless-no-such-user -- true
    expect_bad_option run --user "root:forkless-no-such-group" -- true
    expect_bad_option run --user '' -- true
    expect_bad_option run --user root: -- true
    expect_err_has "--user root:: the group after ':' is empty"
}

case_user_step_fails() {
    # Without privilege the credential change fails in the child.
    [ "$(id -u)" -eq 0 ] || skip "not root"
    getent passwd nobody >/dev/null || skip "no user nobody"
    fl_for_anyone
    run_fl run --user nobody -- "$FL_ANYONE" run --user root -- true
    [ "$STATUS" -ne 126 ] || skip "nobody may not execute $FL_ANYONE"
    expect_status 125
    expect_err_has "forkless: set"
}

# nobody_forkless: sets NOBODY_FL to a copy of forkless that uid 65534
# can run. The checkout may sit in a directory others cannot search, and
# $T is 0700: the copy goes to a world-readable directory inside $T. A
# suite run as uid 65534 with no other group runs these cases as itself.
is_bare_nobody() { [ "$(id -u)" = 65534 ] && [ "$(id -G)" = 65534 ]; }
nobody_forkless() {
    if is_bare_nobody; then
        NOBODY_FL=$FL
        return
    fi
    [ "$(id -u)" -eq 0 ] || skip "not root: cannot switch to uid 65534"
    command -v setpriv >/dev/null || skip "no setpriv to switch to uid 65534"
    [ "$(id -u nobody 2>/dev/null)" = 65534 ] || skip "no user nobody with uid 65534"
    chmod 711 "$T"
    mkdir -m 755 "$T/pub"
    cp "$FL" "$T/pub/forkless" && chmod 755 "$T/pub/forkless" || fail "cannot copy $FL"
    NOBODY_FL=$T/pub/forkless
    as_nobody "$NOBODY_FL" --version >/dev/null 2>&1 ||
        skip "uid 65534 cannot run $NOBODY_FL (is $(dirname "$T") searchable?)"
}
as_nobody() {
    if is_bare_nobody; then "$@"; else setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; fi
}
# run_nobody ARGS...: run_fl as uid 65534, with no supplementary groups.
run_nobody() {
    as_nobody "$NOBODY_FL" "$@" >"$T/out" 2>"$T/err"
    STATUS=$?
}

case_user_over_its_process_limit_names_the_limit() {
    # execve() refuses a user whose processes are over RLIMIT_NPROC after
    # a change of user (EAGAIN), before it looks for the file: the message
    # names the program as given, and the limit.
    [ "$(id -u)" -eq 0 ] || skip "not root: cannot change user"
    command -v setpriv >/dev/null || skip "no setpriv to run a process as uid 65534"
    [ "$(id -u nobody 2>/dev/null)" = 65534 ] || skip "no user nobody with uid 65534"
    setpriv --reuid=65534 --regid=65534 --clear-groups -- sleep 60 &
    BACKGROUND_PIDS+=($!)
    local i
    for i in $(seq 200); do   # until it runs as uid 65534
        grep -q '^Uid:[[:space:]]*65534' "/proc/$!/status" 2>/dev/null && break
        sleep 0.05
    done
    grep -q '^Uid:[[:space:]]*65534' "/proc/$!/status" || fail "setpriv did not become uid 65534"
    run_fl run --rlimit NPROC=0 --user nobody -- true
    expect_status 126
    expect_err_has 'exec "true": Resource temporarily unavailable (the user'"'"'s processes are over RLIMIT_NPROC, which execve() checks after a change of user: --rlimit NPROC=0)'
}

case_user_unprivileged_self() {
    # Without privilege, naming our own user works: nothing that differs
    # is left to change (setgroups would need CAP_SETGID even so).
    nobody_forkless
    run_nobody run --user nobody -- sh -c 'id -u; id -g; id -G'
    expect_status 0
    expect_out "$(printf '65534\n65534\n65534')"
    run_nobody run --user 65534:65534 -- id -u
    expect_status 0
    expect_out 65534
}

case_user_self_where_setgroups_is_denied() {
    # In a user namespace made without privilege (unshare -r, bwrap), uid 0
    # holds CAP_SETGID but setgroups() is refused: naming our own user
    # changes nothing, and must not try.
    command -v unshare >/dev/null || skip "no unshare(1)"
    unshare -r true 2>/dev/null || skip "unshare -r is refused here"
    unshare -r "$FL" run --user 0 -- sh -c 'id -u' >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    expect_out 0
}

case_user_unprivileged_needs_privilege() {
    # Another user needs privilege, and the message says which.
    nobody_forkless
    run_nobody run --user root -- true
    expect_status 125
    expect_err_has "--user root: changing"
    expect_err_has "needs privilege"
    expect_err_has "CAP_SETUID"
    run_nobody run --user nobody:root -- true
    expect_status 125
    expect_err_has "needs privilege, CAP_SETGID"
}

# Past fs.nr_open no fd limit may go, privileged or not: the hint says so,
# not that privilege is missing.
case_rlimit_nofile_past_nr_open_names_the_ceiling() {
    local ceiling
    ceiling=$(cat /proc/sys/fs/nr_open 2>/dev/null) || skip "no /proc/sys/fs/nr_open"
    run_fl run --rlimit "NOFILE=$((ceiling + 1))" -- true
    expect_status 125
    expect_err_has "no RLIMIT_NOFILE may exceed fs.nr_open ($ceiling)"
    run_fl run --rlimit NOFILE=unlimited -- true
    expect_status 125
    expect_err_has "fs.nr_open ($ceiling)"
}

case_rlimit_unprivileged_needs_privilege() {
    nobody_forkless
    # Under a hard limit of 64 (ours to lower), raising it to 128.
    run_nobody run --rlimit NOFILE=64:64 -- "$NOBODY_FL" run --rlimit NOFILE=128 -- true
    expect_status 125
    expect_err_has "--rlimit NOFILE=128: raising a hard limit needs privilege"
    run_nobody run --rlimit NOFILE=64: -- sh -c 'ulimit -Sn'
    expect_status 0
    expect_out 64
}

# A cgroup directory we may create: v2 where mounted, else a v1 hierarchy.
make_cgroup() {
    local root
    for root in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/pids; do
        [ -e "$root/cgroup.procs" ] || continue
        CGROUP_DIR="$root/forkless-test-$$"
        mkdir "$CGROUP_DIR" 2>/dev/null && return 0
    done
    return 1
}

case_cgroup() {
    make_cgroup || skip "no writable cgroup"
    run_fl run --cgroup "$CGROUP_DIR" -- cat /proc/self/cgroup
    rmdir "$CGROUP_DIR"
    expect_status 0
    grep -q "/forkless-test-$$\$" "$T/out" || fail "not in the cgroup: $(out)"
}

case_cgroup_empty() {
    expect_bad_option run --cgroup '' -- true
    expect_err_has "--cgroup: the directory name is empty"
}

case_cgroup_missing() {
    run_fl run --cgroup /nonexistent-cgroup -- true
    expect_status 125
    expect_err_has 'cgroup'
    expect_err_has '/nonexistent-cgroup'
}

case_cgroup_that_is_a_plain_directory() {
    # Its cgroup.procs is what is missing: the message says so.
    mkdir "$T/plain"
    run_fl run --cgroup "$T/plain" -- true
    expect_status 125
    expect_err_has "cgroup \"$T/plain\": No such file or directory (a directory without cgroup.procs: not a cgroup)"
}

case_kill_with_parent() {
    "$FL" run --kill-with-parent -- sh -c 'echo $$ >"$1"; exec sleep 100' sh "$T/pid" \
        >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    local child
    child=$(cat "$T/pid")
    BACKGROUND_PIDS+=("$child")
    kill -KILL "$fl_pid"
    wait_for is_dead "$child"
}

case_no_kill_with_parent() {
    # The contrast: without the option the child outlives forkless.
    "$FL" run -- sh -c 'echo $$ >"$1"; exec sleep 100' sh "$T/pid" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    local child
    child=$(cat "$T/pid")
    BACKGROUND_PIDS+=("$child")
    kill -KILL "$fl_pid"
    wait "$fl_pid" 2>/dev/null
    is_alive "$child" || fail "the child died with forkless"
    kill -KILL "$child"
}

# ---------------------------------------------------------------- timeouts

# time_up_when_ready FILE... -- COMMAND...: runs COMMAND (forkless, or
# timeout(1)) in the background and, once each FILE holds a pid, tells it
# the time is up (SIGALRM, which forkless takes as timeout(1) does);
# STATUS gets its status. The program writes the files once it is ready
# (its traps set, its children started): on a busy machine a fixed
# --timeout could come first.
time_up_when_ready() {
    local files=() f
    while [ "$1" != -- ]; do
        files+=("$1")
        shift
    done
    shift
    "$@" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    for f in "${files[@]}"; do
        wait_for file_has_pid "$f"
        BACKGROUND_PIDS+=("$(cat "$f")")
    done
    kill -ALRM "$fl_pid"
    # (In braces, so that bash's own note on a death by signal is quiet.)
    { wait "$fl_pid"; STATUS=$?; } 2>/dev/null
}
# time_up_when_started COMMAND...: time_up_when_ready with $T/pid.
time_up_when_started() { time_up_when_ready "$T/pid" -- "$@"; }

case_timeout_kills_group() {
    time_up_when_started "$FL" run --timeout 1h -- sh -c 'sleep 100 & echo $! >"$1"; wait' sh "$T/pid"
    expect_status 124
    wait_for is_dead "$(cat "$T/pid")"
}

case_timeout_child_leaves_group() {
    # The child moves from the group forkless made for it into ours
    # (setpgid), and only then is the time up: the group signal misses it,
    # the signal to the child itself must not.
    command -v perl >/dev/null || skip "no perl to call setpgid"
    time_up_when_started "$FL" run --timeout 1h -- perl -e '
        setpgrp(0, getpgrp(getppid())) or die "setpgid: $!";
        open(my $f, ">", $ARGV[0]) or die; print $f "$$\n"; close $f;
        exec "sleep", "100"' "$T/pid"
    expect_status 124
    wait_for is_dead "$(cat "$T/pid")"
}

# need_slowed_sends: SLOWED_SENDS gets the command that runs forkless
# under strace, which holds each signal forkless sends (kill,
# pidfd_send_signal) for 0.2 s: a signal sent twice then reaches the
# program twice, where two sent at once would merge into one. -D keeps
# forkless's pid that of the background job. Writes $T/terms.sh: see
# below.
# need_slowed_sends getpgid: holds forkless's looks at groups too.
need_slowed_sends() {
    need_strace
    local calls=kill,pidfd_send_signal${1:+,$1}
    SLOWED_SENDS=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
        strace -D -o /dev/null -e trace=$calls -e inject=$calls:delay_enter=200000)
    # terms.sh PIDFILE GOTFILE: counts the TERMs it gets and, 0.6 s after
    # the first, writes how many to GOTFILE and exits 7.
    cat >"$T/terms.sh" <<'SH'
n=0
trap 'n=$((n + 1))' TERM
echo $$ >"$1"
while [ $n = 0 ]; do sleep 0.01; done
sleep 0.6
echo $n >"$2"
exit 7
SH
}

case_timeout_signal_reaches_the_program_once() {
    # Its group and, if it has left that group, the program itself: a
    # program still in the group must not get the signal a second time
    # (many take a second TERM or INT as "stop now").
    need_slowed_sends
    rm -f "$T/pid" "$T/got"
    time_up_when_started "${SLOWED_SENDS[@]}" "$FL" run --timeout 1h -- bash "$T/terms.sh" "$T/pid" "$T/got"
    expect_status 124
    expect_file "$T/got" 1
}

case_signal_passed_on_reaches_the_program_once() {
    need_slowed_sends
    rm -f "$T/pid" "$T/got"
    "${SLOWED_SENDS[@]}" "$FL" run --pgroup -- bash "$T/terms.sh" "$T/pid" "$T/got" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    kill -TERM "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 7
    expect_file "$T/got" 1
}

case_kill_tree_timeout_reaches_a_descendant_once() {
    # A descendant handed to forkless, still in the program's group, has
    # the signal from the group: not again as one of forkless's children.
    need_slowed_sends
    rm -f "$T/pid" "$T/got" "$T/ready"
    # The subshell has ended, and so handed its child to forkless, before
    # $T/ready is written.
    time_up_when_ready "$T/pid" "$T/ready" -- "${SLOWED_SENDS[@]}" "$FL" run --kill-tree --timeout 1h -- \
        sh -c '(bash "$0" "$1" "$2" &); echo $$ >"$3"; exec sleep 100' \
        "$T/terms.sh" "$T/pid" "$T/got" "$T/ready"
    expect_status 124
    wait_for test -s "$T/got"
    expect_file "$T/got" 1
}

# write_joiner: $T/joiner.pl GROUP PIDFILE GOTFILE PTERM, which leaves
# its process group for one of its own, writes its pid, and once the file
# PTERM exists (the program has had the TERM) joins group GROUP (-: the
# one it left). It counts the TERMs it gets there: 1 s for the first,
# then 0.6 s for a second, and writes how many to GOTFILE.
write_joiner() {
    command -v perl >/dev/null || skip "no perl to call setpgid"
    cat >"$T/joiner.pl" <<'PL'
my ($group, $pidfile, $got, $pterm) = @ARGV;
$group = getpgrp() if $group eq "-";
setpgrp(0, 0) or die "setpgid: $!";
my $n = 0;
$SIG{TERM} = sub { $n++ };
open(my $f, ">", $pidfile) or die; print $f "$$\n"; close $f;
select(undef, undef, undef, 0.01) until -e $pterm;
setpgrp(0, $group) or die "setpgid: $!";
for (1 .. 100) { last if $n; select(undef, undef, undef, 0.01) }
select(undef, undef, undef, 0.6);
open($f, ">", $got) or die; print $f "$n\n"; close $f;
PL
}

# The program: notes the TERM in $4 and ends (status 3) once $2 is
# written.
TERM_NOTED='trap "echo x >\"\$4\"" TERM'
UNTIL_GOT='until [ -s "$2" ]; do sleep 0.01; done; exit 3'

case_kill_tree_timeout_reaches_a_descendant_that_joins_the_group() {
    # A descendant that joins the program's group just after the group
    # had the signal has missed it: it is not spared as one that got it.
    # strace holds each send for 0.2 s, so the join falls between the
    # group's signal and forkless's look at its children.
    need_slowed_sends
    write_joiner
    rm -f "$T/pid" "$T/got" "$T/ready" "$T/pterm"
    time_up_when_ready "$T/pid" "$T/ready" -- "${SLOWED_SENDS[@]}" "$FL" run --kill-tree --timeout 1h -- \
        sh -c "$TERM_NOTED"'; (perl "$0" $$ "$1" "$2" "$4" &); echo $$ >"$3"; '"$UNTIL_GOT" \
        "$T/joiner.pl" "$T/pid" "$T/got" "$T/ready" "$T/pterm"
    expect_status 124
    expect_file "$T/got" 1
}

case_pipe_timeout_reaches_a_stage_that_rejoins_the_group() {
    # The same for a stage of forkless pipe that left the stages' group
    # and comes back to it just after the group had the signal. Its
    # group is looked at right after that signal: strace holds the look.
    need_slowed_sends getpgid
    write_joiner
    rm -f "$T/pid" "$T/got" "$T/ready" "$T/pterm"
    time_up_when_ready "$T/pid" "$T/ready" -- "${SLOWED_SENDS[@]}" "$FL" pipe --timeout 1h -- \
        sh -c "$TERM_NOTED"'; echo $$ >"$3"; '"$UNTIL_GOT" \
        sh "$T/pid" "$T/got" "$T/ready" "$T/pterm" ::: perl "$T/joiner.pl" - "$T/pid" "$T/got" "$T/pterm"
    expect_status 124
    expect_file "$T/got" 1
}

case_timeout_term_first() {
    time_up_when_started "$FL" run --timeout 1h -- sh -c '
        trap "echo got-term >\"$1\"; exit 3" TERM; echo $$ >"$2"; sleep 100 & wait' \
        sh "$T/flag" "$T/pid"
    expect_status 124
    expect_file "$T/flag" got-term
}

case_kill_after() {
    # The child ignores SIGTERM: SIGKILL follows after --kill-after. The
    # outer timeout only guards against a hang.
    # As with timeout(1), a child that took SIGKILL gives 128+9, not 124.
    local ignore_term='trap "" TERM; echo $$ >"$1"; while :; do sleep 0.05; done'
    time_up_when_started "$FL" run --timeout 1h --kill-after 0.2 -- sh -c "$ignore_term" sh "$T/pid"
    expect_status 137
    wait_for is_dead "$(cat "$T/pid")"
    rm -f "$T/pid"
    time_up_when_started "$FL" run --timeout 1h --kill-after 0 -- sh -c "$ignore_term" sh "$T/pid"
    expect_status 137
}

case_no_kill() {
    # --no-kill (the last word, after --kill-after) never sends SIGKILL:
    # the child takes its time after SIGTERM, and a grandchild that
    # ignores SIGTERM outlives the timeout, as under timeout(1) without -k.
    # The time is up (SIGALRM) once both traps are set: the grandchild
    # writes its pid after its own, a fixed --timeout could come first.
    rm -f "$T/pid"
    time_up_when_started "$FL" run --timeout 1h --kill-after 0.1 --no-kill -- sh -c '
        trap "sleep 1; echo survived >\"$2\"; exit 3" TERM
        (trap "" TERM; exec sh -c "echo \$\$ >\"\$0\"; exec sleep 100" "$1") &
        while :; do sleep 0.05; done' sh "$T/pid" "$T/flag"
    expect_status 124
    expect_file "$T/flag" survived
    is_alive "$(cat "$T/pid")" || fail "the rest of the group got SIGKILL"
    kill -KILL "$(cat "$T/pid")"
}

# group_timeout_test FORKLESS-OPTIONS...: forkless runs a leader whose
# child, in the same group, runs $T/gc.sh LOG PIDFILE; once gc.sh has
# written its pid, SIGALRM tells forkless that the time is up.
group_timeout_test() {
    rm -f "$T/pid" "$T/log"
    "$FL" run --timeout 1h "$@" -- sh -c 'sh "$0" "$1" "$2" & wait' \
        "$T/gc.sh" "$T/log" "$T/pid" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    kill -ALRM "$fl_pid"
    wait_for is_dead "$fl_pid"  # a bound against a wait to --kill-after
    wait "$fl_pid"
    STATUS=$?
}

case_timeout_group_has_kill_after() {
    # The leader dies of SIGTERM at once; the rest of its group gets until
    # --kill-after to end, as timeout -k lets it, and no longer.
    cat >"$T/gc.sh" <<'GC'
trap 'sleep 1; echo cleaned >"$1"; exit' TERM
echo $$ >"$2"
while :; do sleep 0.05; done
GC
    group_timeout_test --kill-after 1h
    expect_status 124
    expect_file "$T/log" cleaned
    wait_for is_dead "$(cat "$T/pid")"
    # One that ignores SIGTERM gets SIGKILL at --kill-after.
    cat >"$T/gc.sh" <<'GC'
trap '' TERM
echo $$ >"$2"
while :; do sleep 0.05; done
GC
    group_timeout_test --kill-after 0.5
    expect_status 124
    wait_for is_dead "$(cat "$T/pid")"
}

case_kill_after_not_waited_when_term_works() {
    # A child that dies of SIGTERM ends the wait long before --kill-after.
    # A hang would end in SIGKILL from the guard: 137, not 124.
    timeout -s KILL 60 "$FL" run --timeout 0.2 --kill-after 1h -- sleep 100 >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 124
}

case_timeout_signal() {
    # --signal: the timeout's first signal, by name or number.
    run_fl run --timeout 0.2 --signal KILL -- sleep 100
    expect_status 137
    local sig
    for sig in USR1 sigusr1 10 40 RTMAX rtmax-2 HUP; do
        rm -f "$T/flag" "$T/pid"
        time_up_when_started "$FL" run --timeout 1h --signal "$sig" -- bash -c '
            trap "echo got >\"$1\"; exit 4" "$2"; echo $$ >"$3"; sleep 100 & wait' \
            bash "$T/flag" "$(echo "$sig" | sed 's/^10$/USR1/; s/^sig//' | tr a-z A-Z)" "$T/pid"
        expect_status 124
        expect_file "$T/flag" got
    done
}

# --signal 0, as timeout -s 0: nothing is sent, only the SIGCONT that
# follows a stop signal (timeout(1) sends it too), which lets the program
# see the time is up, and SIGKILL at the --kill-after deadline.
case_timeout_signal_0() {
    time_up_when_started "$FL" run --timeout 1h --signal 0 --kill-after 1h -- bash -c '
        for s in HUP INT QUIT TERM USR1 USR2 ALRM; do trap "echo $s >>\"$1\"" $s; done
        trap "echo CONT >>\"\$1\"; kill \$!; exit 5" CONT
        sleep 100 & echo $$ >"$2"; wait' bash "$T/got" "$T/pid"
    expect_status 124
    expect_file "$T/got" CONT
    timeout -s KILL 60 "$FL" run --timeout 0.2 --signal 00 --kill-after 0.2 -- sleep 100 \
        >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 137
    expect_err_empty
    timeout -s KILL 60 "$FL" pipe --timeout 0.2 --signal 0 --kill-after 0.2 sleep 100 ::: cat \
        >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 137
    # The cgroup's stop would send SIGTERM for 0.
    expect_bad_option run --kill-tree --cgroup "$T" --signal 0 -- true
    expect_err_has "--signal 0 cannot be used with --kill-tree and --cgroup"
}

case_timeout_signal_bad() {
    local sig
    for sig in NOPE SIGNOPE 65 32 33 -1 '' ' 15' 15x RTMIN+31 RTMAX+1 RTMIN-1 RTMIN+ \
               RT 1000 +0 193 99999999999; do
        expect_bad_option run --timeout 1 --signal "$sig" -- true
        expect_err_has "--signal: invalid signal \"$sig\""
    done
}

case_timeout_signal_spellings_as_timeout() {
    # timeout(1) reads a shell's exit status as its signal (137: KILL,
    # 265: ksh's 256+9), leading zeros, RTMIN1 and EXIT (0).
    local sig
    for sig in 137 265 0009; do
        run_fl run --timeout 0.01 --signal "$sig" -- sleep 10
        expect_status 137
    done
    for sig in 143 00015 SIGRTMIN1 RTMIN-0 rtmax+0 RTMIN+0001 EXIT 128 0000; do
        run_fl run --timeout 0.01 --signal "$sig" --kill-after 0.01 -- sleep 10
        case $sig in
        EXIT | 128 | 0000) expect_status 137 ;;   # no signal: the SIGKILL ends it
        *) expect_status 124 ;;
        esac
    done
    # The lists read numbers so too: 141 is PIPE.
    run_fl run --ignore-signal 141,0013 -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigIgn))) -eq $(sig_bit 13) ] || fail "SigIgn $(sig_field SigIgn), expected PIPE"
    # SIG and a number is that signal itself, not a shell's 128+N (str2sig()).
    run_fl run --timeout 0.01 --signal SIG15 -- sleep 10
    expect_status 124
    run_fl run --ignore-signal sig2 -- cat /proc/self/status
    expect_status 0
    [ $((0x$(sig_field SigIgn))) -eq $(sig_bit 2) ] || fail "SigIgn $(sig_field SigIgn), expected INT"
    for sig in SIG143 SIG65 SIG SIG+1; do
        expect_bad_option run --timeout 1 --signal "$sig" -- true
        expect_err_has "--signal: invalid signal \"$sig\""
    done
}

case_timeout_short_options_as_timeout() {
    # timeout(1)'s -s, -k, -p and -f, and env(1)'s --ignore-environment.
    run_fl run -s KILL --timeout 0.01 -- sleep 10
    expect_status 137
    run_fl run -p --timeout 0.01 -- sleep 10
    expect_status 143
    run_fl run -s 0 -k 0.01 --timeout 0.01 -- sleep 10
    expect_status 137
    # -f: the program stays in forkless's group (field 5 of stat).
    run_fl run -f -s HUP --timeout 0.2 -- sh -c \
        '[ "$(cut -d" " -f5 /proc/$$/stat)" = "$(cut -d" " -f5 /proc/$PPID/stat)" ] && sleep 10'
    expect_status 124
    run_fl pipe -s KILL -k 5 --timeout 0.01 -- sleep 10 ::: cat
    expect_status 137
    run_fl run --ignore-environment -- X=1 env
    expect_status 0
    expect_out "X=1"
}

case_timeout_reads_the_locale_decimal_point() {
    # As timeout(1): "0,01" where the locale's decimal point is a comma,
    # and "0.01" still.
    [ "${FL_GLIBC:-1}" = 1 ] || skip "this libc (musl) keeps LC_NUMERIC at C: no decimal comma to read"
    command -v localedef >/dev/null || skip "no localedef to make a locale with a decimal comma"
    mkdir -p "$T/loc"
    localedef -i de_DE -f UTF-8 "$T/loc/de_DE.UTF-8" >"$T/localedef" 2>&1 ||
        skip "cannot make the de_DE locale here: $(tail -n 1 "$T/localedef")"
    local d
    for d in 0,01 0.01; do
        LOCPATH="$T/loc" LC_ALL=de_DE.UTF-8 run_fl run --timeout "$d" -- sleep 10
        expect_status 124
    done
    run_fl run --timeout 0,01 -- sleep 10
    expect_status 125
}

case_preserve_status() {
    time_up_when_started "$FL" run --timeout 1h --preserve-status -- sh -c '
        trap "exit 3" TERM; echo $$ >"$1"; sleep 100 & wait' sh "$T/pid"
    expect_status 3
    # Killed by the timeout's signal: 128+N, exited, not died by it.
    wait_status "$T/how" "$FL" run --timeout 0.2 --preserve-status -- sleep 100
    expect_file "$T/how" "exit 143"
    rm -f "$T/pid"
    time_up_when_started "$FL" run --timeout 1h --kill-after 0 --preserve-status -- sh -c '
        trap "" TERM; echo $$ >"$1"; while :; do sleep 0.05; done' sh "$T/pid"
    expect_status 137
    run_fl run --timeout 1h --preserve-status -- sh -c 'exit 5'
    expect_status 5
}

case_foreground() {
    # --foreground: the child stays in our process group, and only the
    # child is signalled, so its own children outlive the timeout, as
    # with timeout --foreground.
    run_fl run --timeout 1h --foreground -- cat /proc/self/stat
    expect_status 0
    [ "$(stat_field 5)" != "$(stat_pid)" ] || fail "child leads a group: $(out)"
    time_up_when_started "$FL" run --timeout 1h --foreground -- sh -c 'sleep 100 & echo $! >"$1"; wait' \
        sh "$T/pid"
    expect_status 124
    is_alive "$(cat "$T/pid")" || fail "the grandchild was timed out too"
    expect_bad_option run --foreground --pgroup -- true
    expect_bad_option run --foreground --setsid --timeout 1 -- true
}

# same_as_timeout1 "TIMEOUT ARGS" "FORKLESS OPTIONS" PROGRAM...: the
# exit status a shell sees is the same under timeout(1) and forkless.
same_as_timeout1() {
    local targs=$1 fopts=$2 ours theirs
    shift 2
    # One PATH for both: an entry the user cannot search is EACCES to
    # timeout(1)'s execvp and skipped by forkless, on purpose.
    local PATH=/usr/bin:/bin
    # (In braces, so that bash's own note on a death by signal is quiet.)
    # shellcheck disable=SC2086
    { timeout -s KILL 60 timeout $targs "$@" >/dev/null 2>&1; theirs=$?; } 2>/dev/null
    # shellcheck disable=SC2086
    { timeout -s KILL 60 "$FL" run $fopts -- "$@" >/dev/null 2>"$T/err"; ours=$?; } 2>/dev/null
    [ "$ours" -eq "$theirs" ] ||
        fail "timeout $targs $*: $theirs; forkless run $fopts: $ours: $(err)"
}

# same_as_timeout1_when_ready "TIMEOUT ARGS" "FORKLESS OPTIONS" SCRIPT: as
# same_as_timeout1 for sh -c SCRIPT, which writes its pid to the file $1
# once its traps are set: only then is the time up for either (SIGALRM,
# which timeout(1) takes for it too).
same_as_timeout1_when_ready() {
    local targs=$1 fopts=$2 script=$3 ours theirs
    local PATH=/usr/bin:/bin  # as in same_as_timeout1
    rm -f "$T/pid"
    # shellcheck disable=SC2086
    time_up_when_started timeout $targs sh -c "$script" sh "$T/pid"
    theirs=$STATUS
    rm -f "$T/pid"
    # shellcheck disable=SC2086
    time_up_when_started "$FL" run $fopts -- sh -c "$script" sh "$T/pid"
    ours=$STATUS
    [ "$ours" -eq "$theirs" ] ||
        fail "timeout $targs: $theirs; forkless run $fopts: $ours; sh -c '$script': $(err)"
}

case_exit_codes_as_timeout1() {
    command -v timeout >/dev/null || skip "no timeout(1) to compare with"
    local ignore_term='trap "" TERM; echo $$ >"$1"; while :; do sleep 0.05; done'
    same_as_timeout1 "0.2" "--timeout 0.2" sleep 100
    same_as_timeout1 "1h" "--timeout 1h" sh -c 'exit 3'
    same_as_timeout1_when_ready "-k 0.2 1h" "--timeout 1h --kill-after 0.2" "$ignore_term"
    same_as_timeout1 "-s KILL 0.2" "--timeout 0.2 --signal KILL" sleep 100
    same_as_timeout1 "-s INT 0.2" "--timeout 0.2 --signal INT" sleep 100
    same_as_timeout1 "--preserve-status 0.2" "--timeout 0.2 --preserve-status" sleep 100
    same_as_timeout1_when_ready "--preserve-status 1h" "--timeout 1h --preserve-status" \
        'trap "exit 3" TERM; echo $$ >"$1"; sleep 100 & wait'
    same_as_timeout1_when_ready "--preserve-status -k 0.2 1h" \
        "--timeout 1h --kill-after 0.2 --preserve-status" "$ignore_term"
    same_as_timeout1_when_ready "--foreground -k 0.2 1h" \
        "--timeout 1h --kill-after 0.2 --foreground" "$ignore_term"
    same_as_timeout1 "0.0000000001" "--timeout 0.0000000001" sleep 100
    same_as_timeout1 "1d" "--timeout 1d" true
    same_as_timeout1 "2.34e+5" "--timeout 2.34e+5" true
    same_as_timeout1 "1h" "--timeout 1h" sh -c 'kill -USR1 $$'
    same_as_timeout1 "1h" "--timeout 1h" forkless-no-such-program
    same_as_timeout1 "1h" "--timeout 1h" /etc/passwd
    # How a waiting parent sees a child killed by a signal.
    wait_status "$T/theirs" timeout 1h sh -c 'kill -USR1 $$'
    wait_status "$T/how" "$FL" run --timeout 1h -- sh -c 'kill -USR1 $$'
    expect_file "$T/how" "$(cat "$T/theirs")"
}

case_timeout_not_reached() {
    run_fl run --timeout 1h -- sh -c 'exit 3'
    expect_status 3
    run_fl run --timeout 0 -- true
    expect_status 0
}

case_timeout_tiny() {
    # A positive duration, however small, rounds up to 1 ms: never to 0,
    # which would mean no timeout. A hang ends in SIGKILL from the guard.
    local d
    for d in 0.0000000001 0.00000000000000000001m; do
        timeout -s KILL 20 "$FL" run --timeout "$d" -- sleep 100 >"$T/out" 2>"$T/err"
        STATUS=$?
        expect_status 124
    done
}

case_timeout_stays_in_group_with_setsid() {
    time_up_when_started "$FL" run --setsid --timeout 1h -- sh -c 'sleep 100 & echo $! >"$1"; wait' \
        sh "$T/pid"
    expect_status 124
    wait_for is_dead "$(cat "$T/pid")"
}

case_durations() {
    # Long enough for `true` on any machine; short ones go to --kill-after,
    # which only counts after a timeout.
    local d
    # As timeout(1): the d suffix, exponents, and durations too long for
    # forkless, which mean the longest it can wait.
    for d in 30 30.5 1000.5 60. 30000ms 30s 3m 1h 1d 0 2.34e+5 1e3 3E1 1.5e2s \
             99999999999999999999 9999999999999999h 1e999 1e99999999999999999999d; do
        run_fl run --timeout "$d" -- sh -c 'exit 3'
        [ "$STATUS" -eq 3 ] || fail "--timeout $d: exit $STATUS: $(err)"
    done
    for d in 1 1.5 .5 2. 500ms 2s 3m 1h 1d 0.001 0 0ms 1.0000000001 1e-3 5E-1 \
             2.5e+0m 1e999 0e999; do
        run_fl run --kill-after "$d" -- true
        [ "$STATUS" -eq 0 ] || fail "--kill-after $d: exit $STATUS: $(err)"
    done
}

case_durations_bad() {
    local d
    for d in -1 +1 '' abc 1x 1.2.3 . s 1ms2 ' 1' '1 ' 0x10 inf nan 1e 1e+ e5 .e5 1e3.5 \
             1d2 1D 1S 12h30m; do
        expect_bad_option run --timeout "$d" -- true
        expect_err_has "--timeout: invalid duration \"$d\""
        expect_bad_option run --kill-after "$d" -- true
    done
}

# forward_signal_test SIG OPTIONS...: forkless passes our SIG on to its
# child (bash, which knows every signal name).
forward_signal_test() {
    local sig=$1
    shift
    rm -f "$T/pid" "$T/flag"
    # Background processes write to files: one holding our output open
    # would keep CTest waiting for it.
    "$FL" run "$@" -- bash -c 'sleep 100 & s=$!; trap "echo got-$3 >\"$2\"; kill \$s; exit 7" "$3"; echo $$ >"$1"; wait' \
        bash "$T/pid" "$T/flag" "$sig" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    kill -s "$sig" "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 7
    expect_file "$T/flag" "got-$sig"
}
forward_test() { forward_signal_test TERM "$@"; }

case_forward_sigterm() { forward_test; }
case_forward_sigterm_with_timeout() { forward_test --timeout 1h; }
case_forward_timeout_signals() {
    # Every signal that would end forkless, not only the HUP, INT, QUIT
    # and TERM that timeout 9.1 passes on.
    local sig
    for sig in USR1 USR2 PIPE XCPU RTMIN+1 RTMAX; do
        forward_signal_test "$sig"
        forward_signal_test "$sig" --timeout 1h
    done
}

# sigalrm_test TIMEOUT: SIGALRM sent to forkless --timeout TIMEOUT
# means, as for timeout(1): the time is up.
sigalrm_test() {
    rm -f "$T/pid"
    time_up_when_started "$FL" run --timeout "$1" -- sh -c 'echo $$ >"$1"; exec sleep 100' \
        sh "$T/pid"
    expect_status 124
    wait_for is_dead "$(cat "$T/pid")"
}
case_sigalrm_is_the_timeout() { sigalrm_test 1h; }

case_sigalrm_with_timeout_0() {
    # --timeout 0 sets no time limit, yet SIGALRM still means the time is
    # up, and the program still gets a process group of its own, as with
    # timeout 0.
    command -v timeout >/dev/null && timeout 0 true || skip "no timeout(1) here"
    sigalrm_test 0
    run_fl run --timeout 0 -- cat /proc/self/stat
    expect_status 0
    [ "$(stat_field 5)" = "$(stat_pid)" ] || fail "not a group leader: $(out)"
    # (timeout 0 makes the group its own, forkless the program's.)
    timeout 0 cat /proc/self/stat >"$T/out"
    [ "$(stat_field 5)" = "$(stat_field 4)" ] || fail "timeout 0: no group of its own: $(out)"
}

case_ignored_signal_not_passed_on() {
    # forkless runs in the background here, so it starts with SIGINT
    # ignored: it leaves that alone (timeout 9.1 would pass it on). The
    # TERM that follows is passed on, and a child that got INT first would
    # say so first.
    "$FL" run -- sh -c 'trap "echo int >>\"$2\"" INT; trap "echo term >>\"$2\"; exit 7" TERM; echo $$ >"$1"; while :; do sleep 0.05; done' \
        sh "$T/pid" "$T/flag" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    grep -q '^SigIgn:.*[2367abef]$' "/proc/$fl_pid/status" ||
        skip "SIGINT not ignored in a background job here"
    kill -INT "$fl_pid"
    kill -TERM "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 7
    expect_file "$T/flag" term
}

case_own_sigpipe_not_passed_on() {
    # forkless's own line to a stderr whose reader has gone raises a
    # SIGPIPE in forkless: the program must not get it.
    "$FL" run -v -- sh -c 'sleep 0.3; echo ok >"$1"' sh "$T/flag" 2>&1 | true
    STATUS=${PIPESTATUS[0]}
    expect_status 0
    expect_file "$T/flag" ok
}

case_ignored_term_not_passed_on() {
    # SIGTERM, the timeout's signal by default, is a signal like the
    # others: ignored when forkless started, it is not passed on.
    env --ignore-signal=TERM "$FL" run -- sh -c 'echo $$ >"$1"; sleep 0.5; echo lived >"$2"' \
        sh "$T/pid" "$T/flag" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    kill -TERM "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 0
    expect_file "$T/flag" lived
}

case_forward_then_kill_after() {
    # As timeout -k: with --kill-after, a signal passed on is followed by
    # SIGKILL if the child is still there that much later.
    "$FL" run --kill-after 0.3 -- sh -c 'trap "" TERM; echo $$ >"$1"; while :; do sleep 0.05; done' \
        sh "$T/pid" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    kill -TERM "$fl_pid"
    wait_for is_dead "$(cat "$T/pid")"
    wait "$fl_pid"
    STATUS=$?
    expect_status 137
}
case_forward_then_kill_after_is_a_timeout() {
    # The SIGKILL that --kill-after sends after a signal passed on is a
    # timeout, as for timeout -k (it exits 137 with --foreground; without
    # it, it dies by its own SIGKILL to its group): forkless exits 137,
    # and does not die by SIGKILL as if something had killed it.
    command -v perl >/dev/null || skip "no perl to see how a process ended"
    local opts
    for opts in "" "--foreground" "--timeout 1h"; do
        rm -f "$T/pid" "$T/how"
        # shellcheck disable=SC2086
        wait_status "$T/how" "$FL" run -v --kill-after 0.3 $opts -- \
            sh -c 'trap "" TERM; echo $$ >"$1"; while :; do sleep 0.05; done' sh "$T/pid" &
        local waiter=$!
        BACKGROUND_PIDS+=("$waiter")
        wait_for file_has_pid "$T/pid"
        BACKGROUND_PIDS+=("$(cat "$T/pid")")
        # forkless is the program's parent.
        kill -TERM "$(awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$(cat "$T/pid")/stat")"
        wait "$waiter"
        [ "$(cat "$T/how")" = "exit 137" ] ||
            fail "with '$opts': forkless ended by $(cat "$T/how"), expected exit 137: $(err)"
        expect_err_has "timed out"
    done
}

case_forward_as_the_child_ends() {
    # A signal that comes as the child (a group leader) ends, before
    # forkless has reaped it, still goes to the rest of its group. forkless
    # is stopped meanwhile, so that it sees both at once.
    cat >"$T/gc.sh" <<'GC'
trap 'echo got-term >"$1"; exit' TERM
echo $$ >"$2"
while :; do sleep 0.05; done
GC
    "$FL" run --pgroup -- sh -c 'sh "$0" "$1" "$2" & echo $$ >"$3"
        while [ ! -e "$4" ]; do sleep 0.05; done' \
        "$T/gc.sh" "$T/log" "$T/gcpid" "$T/pid" "$T/go" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    wait_for file_has_pid "$T/gcpid"
    BACKGROUND_PIDS+=("$(cat "$T/gcpid")")
    kill -STOP "$fl_pid"
    touch "$T/go"
    wait_for is_dead "$(cat "$T/pid")"
    kill -TERM "$fl_pid"
    kill -CONT "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 0
    wait_for test -s "$T/log"
    expect_file "$T/log" got-term
}

case_forward_sighup_pgroup() {
    "$FL" run --pgroup -- sh -c 'sleep 100 & s=$!; trap "kill \$s; exit 9" HUP; echo $$ >"$1"; wait' \
        sh "$T/pid" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    kill -HUP "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 9
}

case_no_fd_for_signals() {
    # With RLIMIT_NOFILE at 4 only one fd is left beyond 0-2: forkless
    # cannot both watch for signals and hold the child's pidfd. It must
    # refuse (125) before running anything, never run the program with
    # every signal to it blocked and unread.
    # (The dynamic loader takes fd 3 for a moment, and gives it back.)
    bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done
        ulimit -n 4 || exit 99
        exec "$0" run -- touch "$1"' "$FL" "$T/flag" >"$T/out" 2>"$T/err"
    STATUS=$?
    [ "$STATUS" -ne 99 ] || skip "cannot lower RLIMIT_NOFILE"
    expect_status 125
    expect_err_has "forkless: "
    [ ! -e "$T/flag" ] || fail "the program ran: $(err)"
}

# need_strace: skips unless strace is here and may trace (a container may
# refuse ptrace); the cases that use it widen a race's window with it.
need_strace() {
    command -v strace >/dev/null || skip "no strace to widen the window"
    strace -o /dev/null -e trace=none true 2>/dev/null || skip "strace cannot trace here"
}

# need_pty: skips unless a pseudo-terminal can be had here: /dev/ptmx may
# be missing, /dev/pts may hold no devpts, a container may refuse them.
# Asked of python3's openpty() (posix_openpt, grantpt, unlockpt, the
# terminal side) where there is one, so that a forkless whose --pty breaks
# still fails the case; else of forkless itself.
need_pty() {
    if command -v python3 >/dev/null; then
        python3 -c 'import os; os.openpty()' >"$T/probe" 2>&1 ||
            skip "no pseudo-terminal here: $(tail -n 1 "$T/probe")"
    else
        "$FL" run --pty -- true </dev/null >"$T/probe" 2>&1 ||
            skip "no pseudo-terminal here: $(cat "$T/probe")"
    fi
}

# need_pty_python: python3, with a pseudo-terminal to run forkless on.
# Writes $T/on_pty.py, $T/rec.py and $T/ptyout.py (see below).
need_pty_python() {
    command -v python3 >/dev/null || skip "no python3 to drive a pseudo-terminal"
    need_pty
    # ptyout.py, for a script run with PYTHONPATH=$T: print_until(fd, pid,
    # marker, secs) prints what the terminal fd shows (without '\r') once
    # marker has come, or secs later, having killed pid, its session leader.
    # foreground_job(argv), in that session leader, starts argv as a job
    # of its own in the terminal's foreground, as a shell does; its pid.
    # With refuse_waitid_pidfd=ERRNO, under a seccomp filter that answers
    # waitid(P_PIDFD, ...) with it (x86-64 and arm64 only: 0 elsewhere).
    cat >"$T/ptyout.py" <<'PY'
import ctypes, os, select, signal, struct, sys, time
WAITID = {"x86_64": 247, "aarch64": 95}.get(os.uname().machine)
def refuse_waitid_pidfd(err):
    if WAITID is None:
        return False
    ld, jeq, ret = 0x20, 0x15, 0x06   # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    code = b"".join(struct.pack("=HBBI", *i) for i in (
        (ld, 0, 0, 0), (jeq, 0, 3, WAITID),              # nr
        (ld, 0, 0, 16), (jeq, 0, 1, 3),                  # args[0]'s low word: P_PIDFD
        (ret, 0, 0, 0x00050000 | err), (ret, 0, 0, 0x7fff0000)))
    buf = ctypes.create_string_buffer(code)
    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    prog = Prog(len(code) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    return (libc.prctl(38, 1, 0, 0, 0) == 0 and                  # PR_SET_NO_NEW_PRIVS
            libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0)    # PR_SET_SECCOMP, FILTER
def foreground_job(argv, refuse_waitid_pidfd_with=0):
    job = os.fork()
    if job == 0:
        # The terminal from both sides too, as bash does: else the program
        # may look at it before the shell's tcsetpgrp(), in the background.
        os.setpgid(0, 0)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        os.tcsetpgrp(0, os.getpid())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        if refuse_waitid_pidfd_with and not refuse_waitid_pidfd(refuse_waitid_pidfd_with):
            os._exit(77)
        os.execv(argv[0], argv)
    try:
        os.setpgid(job, job)   # as a shell does, for whichever runs first
    except PermissionError:
        pass                   # it has exec'd, in the group it made itself
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, job)
    return job
def print_until(fd, pid, marker, secs):
    seen = b""
    end = time.time() + secs
    while marker not in seen and time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    if marker not in seen:
        os.kill(pid, signal.SIGKILL)
    sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
PY
    # on_pty.py ACTION PIDFILE COMMAND...: runs COMMAND as the session
    # leader of a new pseudo-terminal, its controlling terminal. Once
    # PIDFILE holds a pid: ACTION intr types Ctrl-C, hangup closes the
    # terminal.
    # Prints how COMMAND ended ("exit N", "signal N"), or "hung" when it
    # had not ended 20 s later (then it and the pid in PIDFILE are killed).
    cat >"$T/on_pty.py" <<'PY'
import os, pty, select, signal, sys, time
action, pidfile, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
def drain(seconds):
    end = time.time() + seconds
    while fd >= 0 and time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                if not os.read(fd, 4096):
                    return
            except OSError:
                return
def child_pid():
    try:
        with open(pidfile) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0
end = time.time() + 20
while not child_pid() and time.time() < end:
    drain(0.05)
if action == "intr":
    os.write(fd, b"\x03")
elif action == "hangup":
    os.close(fd)
    fd = -1
while time.time() < end:
    r, status = os.waitpid(pid, os.WNOHANG)
    if r:
        print("exit %d" % os.WEXITSTATUS(status) if os.WIFEXITED(status)
              else "signal %d" % os.WTERMSIG(status))
        sys.exit(0)
    drain(0.05)
    if fd < 0:
        time.sleep(0.05)
for p in (child_pid(), pid):
    if p:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
os.waitpid(pid, 0)
print("hung")
PY
    # rec.py FILE PIDFILE [own-group]: waits for INT or HUP, then writes
    # to FILE the ones it got (each one it gets, in 0.5 s more) and exits
    # 5. With own-group it leaves its process group for one of its own.
    cat >"$T/rec.py" <<'PY'
import os, signal, sys, time
got = []
for s in (signal.SIGINT, signal.SIGHUP):
    signal.signal(s, lambda n, f: got.append(signal.Signals(n).name))
if sys.argv[3:] == ["own-group"]:
    os.setpgid(0, 0)
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % os.getpid())
while not got:
    time.sleep(0.02)
time.sleep(0.5)
with open(sys.argv[1], "w") as f:
    f.write(" ".join(got) + "\n")
sys.exit(5)
PY
}

# on_pty ACTION FORKLESS-ARGS...: forkless runs rec.py under on_pty.py
# (above); $T/how says how forkless ended, $T/got what rec.py got.
on_pty() {
    local action=$1
    shift
    rm -f "$T/pid" "$T/got"
    python3 "$T/on_pty.py" "$action" "$T/pid" "$FL" "$@" -- \
        python3 "$T/rec.py" "$T/got" "$T/pid" ${REC_OWN_GROUP:+own-group} >"$T/how" 2>"$T/err"
}

case_terminal_intr_same_group() {
    # Ctrl-C reaches the child in forkless's group from the terminal:
    # forkless must not pass it on a second time.
    need_pty_python
    on_pty intr run
    expect_file "$T/how" "exit 5"
    expect_file "$T/got" SIGINT
}

case_terminal_intr_child_left_group() {
    # The child has left forkless's group (--foreground lets a child do
    # that and stay the program): Ctrl-C reaches forkless only, which
    # must pass it on.
    need_pty_python
    REC_OWN_GROUP=1 on_pty intr run --foreground --timeout 1h
    expect_file "$T/how" "exit 5"
    expect_file "$T/got" SIGINT
    REC_OWN_GROUP=1 on_pty intr run
    expect_file "$T/how" "exit 5"
    expect_file "$T/got" SIGINT
}

case_terminal_hangup_session_leader() {
    # forkless leads the terminal's session (ssh -t host forkless run
    # ...): a hangup sends SIGHUP to forkless alone, which must pass it
    # on, whether the child is in its group or not.
    need_pty_python
    on_pty hangup run
    expect_file "$T/how" "exit 5"
    expect_file "$T/got" SIGHUP
    on_pty hangup run --foreground --timeout 1h
    expect_file "$T/how" "exit 5"
    expect_file "$T/got" SIGHUP
    on_pty hangup run --pgroup
    expect_file "$T/how" "exit 5"
    expect_file "$T/got" SIGHUP
}

# ---------------------------------------------------------------- backends

backend_test() {
    run_fl run -v $(backend_opts "$1") -- sh -c 'echo ran'
    expect_status 0
    expect_out ran
    expect_err_has "$2 backend"
}
case_backend_auto() {
    run_fl run -v --backend auto -- true
    expect_status 0
    expect_err_has "backend"
    ! grep -q "auto backend" "$T/err" || fail "reports auto, not the backend that ran"
}
case_backend_clone() { backend_test clone clone; }
case_backend_posix_spawn() { backend_test posix_spawn posix_spawn; }
case_backend_fork() { backend_test fork fork; }

case_backend_exit_codes() {
    local b
    for b in clone posix_spawn fork; do
        run_fl run $(backend_opts $b) -- sh -c 'exit 5'
        [ "$STATUS" -eq 5 ] || fail "$b: exit $STATUS, expected 5: $(err)"
        run_fl run $(backend_opts $b) -- forkless-no-such-program
        [ "$STATUS" -eq 127 ] || fail "$b: exit $STATUS, expected 127: $(err)"
        run_fl run $(backend_opts $b) -C /nonexistent-dir -- true
        [ "$STATUS" -eq 125 ] || fail "$b: exit $STATUS, expected 125: $(err)"
    done
}

case_backend_unknown() {
    expect_bad_option run --backend vfork -- true
    expect_bad_option run --backend '' -- true
    expect_bad_option run --backend CLONE -- true
}

case_no_fork() {
    expect_bad_option run --no-fork --backend fork -- true
    expect_err_has "--no-fork and --backend fork cannot be used together"
    run_fl run --no-fork -- true
    expect_status 0
}

case_posix_spawn_refuses_unsupported() {
    # posix_spawn cannot set an rlimit: an error, never a dropped setting.
    run_fl run --backend posix_spawn --rlimit NOFILE=100 -- true
    expect_status 125
    expect_err_has "rlimits"
}

case_posix_spawn_closes_fds_or_says_it_cannot() {
    # An fd inherited without CLOEXEC: closed in the child by default, or,
    # where the libc's posix_spawn cannot close fds, a refusal naming why.
    exec 7</dev/null
    run_fl run --backend posix_spawn -- sh -c 'test -e /proc/self/fd/7 && echo leaked || echo closed'
    if [ "${FL_POSIX_SPAWN_CLOSES_FDS:-1}" = 1 ]; then
        expect_status 0
        expect_out closed
    else
        expect_status 125
        expect_err_has "cannot close inherited fds"
        run_fl run --backend posix_spawn --keep-fds -- sh -c 'test -e /proc/self/fd/7 && echo leaked || echo closed'
        expect_status 0
        expect_out leaked
    fi
}

# child_sleeps PID: a child of PID is asleep (waiting between retries).
# Bash builtins only: this runs inside the child's one-second retry budget.
child_sleeps() {
    local f c line kids
    for f in /proc/"$1"/task/*/children; do
        kids=()
        read -ra kids <"$f" 2>/dev/null   # no newline at the end: status 1
        for c in "${kids[@]}"; do
            read -r line <"/proc/$c/stat" 2>/dev/null || continue
            line=${line##*) }
            [ "${line%% *}" = S ] && return 0
        done
    done
    return 1
}

case_retry_etxtbsy() {
    printf '#!/bin/sh\nexit 4\n' >"$T/prog"
    chmod 755 "$T/prog"
    # Open for writing here: "Text file busy", with or without retries.
    exec 8>>"$T/prog"
    run_fl run -- "$T/prog"
    expect_status 126
    expect_err_has "Text file busy"
    run_fl run --retry-etxtbsy -- "$T/prog"
    expect_status 126
    expect_err_has "Text file busy"
    exec 8>&-
    # A writer that lets go once the child waits to retry.
    mkfifo "$T/release"
    sh -c 'exec 8>>"$1"; echo open; read x <"$2"' sh "$T/prog" "$T/release" >"$T/holder" &
    BACKGROUND_PIDS+=($!)
    wait_for grep -q open "$T/holder"
    [ -e /proc/$BASHPID/task/$BASHPID/children ] || skip "no /proc/PID/task/TID/children here"
    "$FL" run --retry-etxtbsy -- "$T/prog" >"$T/out" 2>"$T/err" &
    local fl_pid=$! i
    BACKGROUND_PIDS+=($fl_pid)
    for ((i = 0; i < 2000; i++)); do
        child_sleeps $fl_pid && break
        sleep 0.01
    done
    echo go >"$T/release"
    wait $fl_pid
    STATUS=$?
    expect_status 4
}

case_shell_fallback() {
    printf 'echo fallback-ran\n' >"$T/script"
    chmod 755 "$T/script"
    run_fl run --shell-fallback -- "$T/script"
    expect_status 0
    expect_out fallback-ran
    run_fl run -- "$T/script"
    expect_status 126
}

case_verbose() {
    run_fl run -v -- true
    expect_status 0
    grep -q "pid [0-9][0-9]*" "$T/err" || fail "no pid: $(err)"
    expect_err_has "backend"
    expect_err_has "/true"
    expect_err_has "exited with status 0"
    run_fl run --verbose -- sh -c 'exit 3'
    expect_status 3
    expect_err_has "exited with status 3"
    # A program the search does not find is named as given, then its failure.
    run_fl run -v -- forkless-no-such-program
    expect_status 127
    expect_err_has "launched forkless-no-such-program as pid"
    expect_err_has 'exec "forkless-no-such-program"'
}

# ------------------------------------------------------- command line itself

case_help() {
    run_fl --help
    expect_status 0
    grep -q "forkless run" "$T/out" || fail "no usage: $(out)"
    run_fl -h
    expect_status 0
    run_fl run --help
    expect_status 0
    grep -q -- "--timeout" "$T/out" || fail "run --help lacks --timeout: $(out)"
    run_fl run -h
    expect_status 0
}

case_help_options_and_differences() {
    run_fl run --help
    expect_status 0
    local opt
    for opt in --signal --kill-after --no-kill --preserve-status --foreground --argv0 \
               --default-signal --ignore-signal --block-signal --path-relative --keep-signals \
               --keep-fds --kill-with-parent; do
        grep -q -- "$opt" "$T/out" || fail "run --help lacks $opt"
    done
    # Where it differs from env(1) and timeout(1) on purpose, it says so.
    grep -q "Where forkless differs from env(1) and timeout(1), on purpose" "$T/out" ||
        fail "run --help does not say where forkless differs from env and timeout"
    local said
    for said in "timeout 9.1 passes on HUP, INT, QUIT, TERM" "reaches the program twice" \
                "forkless exits 137" "timeout 1e-999" "The ms suffix" "--argv0 is forkless's own" \
                "exits 125; timeout needs none"; do
        grep -qF -- "$said" "$T/out" || fail "run --help does not say \"$said\""
    done
    ! grep -q "as timeout(1) does, but" "$T/out" || fail "run --help says every signal is passed on as timeout does"
    awk 'length > 80 { print; bad = 1 } END { exit bad }' "$T/out" >"$T/long" ||
        fail "lines over 80 columns: $(cat "$T/long")"
}

# Help and version text that cannot be written is an error, as for
# coreutils (env --help >/dev/full: "write error", 125), not a success.
case_help_write_error() {
    [ -w /dev/full ] || skip "no /dev/full"
    local args more=()
    : >"$T/out"
    # A build with the benchmarks: their help, and their tables, too.
    "$FL" bench --help >/dev/null 2>&1 && more=("bench --help" "bench heap --help")
    for args in --help -h --version "run --help" "run -h" "run --version" "pipe --help" \
                "pipe --version" "${more[@]}"; do
        # shellcheck disable=SC2086
        "$FL" $args >/dev/full 2>"$T/err"
        STATUS=$?
        expect_status 125
        expect_err_has "forkless: write error: No space left on device"
        # shellcheck disable=SC2086
        "$FL" $args >&- 2>"$T/err"
        STATUS=$?
        expect_status 125
        expect_err_has "forkless: write error: Bad file descriptor"
    done
}

# --version says the header's FL_VERSION_STRING (which the configure
# checked against CMakeLists.txt's project version), and nothing else
# while the library is the header's own.
case_version() {
    local header want
    header=$(dirname "${BASH_SOURCE[0]}")/../../include/forkless.h
    want=$(sed -n 's/^#define FL_VERSION_STRING "\(.*\)"$/\1/p' "$header")
    [ -n "$want" ] || fail "no FL_VERSION_STRING in $header"
    run_fl --version
    expect_status 0
    expect_out "forkless $want"
    expect_err_empty
    run_fl run --version
    expect_status 0
    expect_out "forkless $want"
}

case_options_end_at_program() {
    run_fl run echo -v --timeout x
    expect_status 0
    expect_out "-v --timeout x"
    run_fl run -- -v
    expect_status 127
}

case_bad_command_line() {
    expect_bad_option
    expect_bad_option frobnicate
    expect_bad_option run
    expect_bad_option run --
    expect_bad_option run -v
    expect_bad_option run --frobnicate -- true
    expect_err_has "--frobnicate"
    expect_bad_option run -Z -- true
    expect_bad_option run --timeout
    expect_err_has "--timeout"
    expect_bad_option run -C
    expect_bad_option run --keep-fds=yes -- true
}

case_an_abbreviation_several_share_is_the_one_of_timeout_or_env() {
    # As timeout(1) and env(1) read it, where it is unique.
    run_fl run --ch=/ -- pwd
    expect_status 0
    expect_out /
    FL_T_ABBREV=1 run_fl run --uns=FL_T_ABBREV -- sh -c 'echo "${FL_T_ABBREV-unset}"'
    expect_status 0
    expect_out unset
    # --kill-after, not --kill-tree or --kill-with-parent: 0 is SIGKILL at once.
    run_fl run --kill=0 --timeout 0.1 -- sh -c 'trap "" TERM; sleep 30'
    expect_status 137
    run_fl pipe --s=KILL --timeout 0.1 sleep 30
    expect_status 137
    # Both are env's: ambiguous there too.
    expect_bad_option run --i -- true
    expect_err_has "--i is ambiguous"
}

case_bad_long_option_messages() {
    # What is wrong with a long option, said as it is: glibc gives an
    # option without argument the letter of its short form as optopt.
    local opt
    for opt in --verbose --clear-env --help --keep-fds; do
        expect_bad_option run "$opt=1" -- true
        expect_err_has "forkless: $opt takes no argument"
    done
    expect_bad_option run --verb=1 -- true  # a prefix, unambiguous
    expect_err_has "forkless: --verbose takes no argument"
    expect_bad_option run --st x -- true
    expect_err_has "--st is ambiguous"
    expect_err_has "--stdin, --stdout, --stderr, --stderr-to-stdout"
    expect_bad_option run --frob=1 -- true
    expect_err_has "unknown option --frob "
    # Short options, alone or in a cluster after a long one.
    expect_bad_option run -Z -- true
    expect_err_has "unknown option -Z "
    expect_bad_option run --verbose -Zv -- true
    expect_err_has "unknown option -Z "
    expect_bad_option run -iZ -- true
    expect_err_has "unknown option -Z "
    # A prefix that is an option itself is that option.
    run_fl run --stderr "$T/e" -- sh -c 'echo x >&2'
    expect_status 0
    expect_file "$T/e" x
}

# ---------------------------------------------------------------- --pty

# The pty's line discipline ends lines with "\r\n".
out_lines() { tr -d '\r' <"$T/out"; }

case_pty_started_in_the_background_takes_the_foreground_settings() {
    # As `forkless run --pty ... &` then `fg` in a shell: the job, started
    # while the prompt had echo and lines off, must wait for the
    # foreground before it reads the terminal's settings for the program.
    need_pty_python
    cat >"$T/bg.py" <<'PY'
import os, pty, signal, sys, termios
fl = sys.argv[1]
pid, master = pty.fork()
if pid == 0:
    cooked = termios.tcgetattr(0)
    prompt = list(cooked)
    prompt[3] &= ~(termios.ICANON | termios.ECHO)
    termios.tcsetattr(0, termios.TCSANOW, prompt)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execv(fl, [fl, "run", "--pty", "--", "stty", "-a"])
    try:
        os.setpgid(job, job)   # as a shell does, for whichever runs first
    except PermissionError:
        pass                   # it has exec'd, in the group it made itself
    _, st = os.waitpid(job, os.WUNTRACED)
    if not os.WIFSTOPPED(st):
        print("the job did not stop for the terminal", flush=True)
        sys.exit(3)
    termios.tcsetattr(0, termios.TCSANOW, cooked)   # the shell's fg
    os.tcsetpgrp(0, job)
    os.kill(-job, signal.SIGCONT)
    while True:
        _, st = os.waitpid(job, os.WUNTRACED)
        if not os.WIFSTOPPED(st):
            break
        os.kill(-job, signal.SIGCONT)
    os.tcsetpgrp(0, os.getpgrp())
    sys.exit(os.waitstatus_to_exitcode(st))
out = b""
while True:
    try:
        d = os.read(master, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(st))
PY
    timeout 30 python3 "$T/bg.py" "$FL" >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    out_lines | tr ' ' '\n' | grep -qx icanon || fail "the program's terminal has no lines: $(out)"
    out_lines | tr ' ' '\n' | grep -qx echo || fail "the program's terminal has no echo: $(out)"
}

case_pty_tty_is_a_pts() {
    need_pty
    run_fl run --pty -- tty </dev/null
    expect_status 0
    out_lines | grep -qx '/dev/pts/[0-9]*' || fail "tty printed \"$(out)\""
}

case_pty_stdin_and_stdout_are_terminals() {
    need_pty
    run_fl run --pty -- sh -c 'test -t 0 && test -t 1 && test -t 2' </dev/null
    expect_status 0
    # A redirected stream keeps its kind.
    run_fl run --pty --stdout "$T/file" -- sh -c 'test -t 0 && ! test -t 1'
    expect_status 0
}

case_pty_size() {
    need_pty
    run_fl run --pty --pty-size 33x121 -- stty size </dev/null
    expect_status 0
    [ "$(out_lines)" = "33 121" ] || fail "stty size said \"$(out)\""
    expect_bad_option run --pty-size 33x121 -- true
    expect_err_has "--pty-size needs --pty"
    local bad
    for bad in 33 x80 0x80 33x 33x80x 33x65536 -1x80; do
        expect_bad_option run --pty --pty-size "$bad" -- true
        expect_err_has "--pty-size: expected ROWSxCOLS"
    done
    expect_bad_option run --pty --foreground -- true
}

case_pty_input_not_a_terminal() {
    need_pty
    # Fed, not echoed, and its end is the terminal's EOF: cat ends.
    run_fl run --pty -- cat <<<"one two"
    expect_status 0
    [ "$(out_lines)" = "one two" ] || fail "cat printed \"$(out)\""
    # A last line without a newline still arrives, and still ends.
    printf 'partial' >"$T/in"
    run_fl run --pty -- cat <"$T/in"
    expect_status 0
    [ "$(out_lines)" = "partial" ] || fail "cat printed \"$(out)\""
}

case_pty_an_eio_before_the_last_bytes_is_read_past() {
    # Linux can say EIO on the master once before the terminal side's last
    # bytes have come (see "Terminals" in forkless.h). The shim says it at
    # the first read of the master, with the output waiting behind it.
    need_pty
    [ -n "${FL_EARLY_EIO_SHIM:-}" ] || skip "FL_EARLY_EIO_SHIM is not set: no shim to load"
    local shim=$FL_EARLY_EIO_SHIM d
    case $shim in
    *[\ :]*)  # LD_PRELOAD splits at spaces and colons: a copy in $T, or /tmp
        case $T in
        *[\ :]*)
            d=$(mktemp -d /tmp/fl-shim.XXXXXX) || skip "no directory in /tmp for the shim"
            CLEAN_DIRS+=("$d")
            ;;
        *) d=$T ;;
        esac
        cp "$shim" "$d/" || skip "cannot copy the shim to $d"
        shim=$d/${shim##*/}
        ;;
    esac
    LD_PRELOAD=$shim FL_EARLY_EIO_SAID="$T/said" \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        "$FL" run --pty -u LD_PRELOAD -u FL_EARLY_EIO_SAID -- sh -c 'echo gone' \
        </dev/null >"$T/out" 2>"$T/err"
    STATUS=$?
    [ -e "$T/said" ] || skip "the shim said no EIO (a forkless that does not load LD_PRELOAD?): $(err)"
    expect_status 0
    [ "$(out_lines)" = "gone" ] || fail "the output after the early EIO is \"$(out)\"; stderr: $(err)"
}

case_pty_exit_codes() {
    need_pty
    run_fl run --pty -- sh -c 'exit 42' </dev/null
    expect_status 42
    run_fl run --pty -- nosuchprogram-forkless </dev/null
    expect_status 127
    run_fl run --pty --backend posix_spawn -- true </dev/null
    expect_status 125
    expect_err_has "posix_spawn cannot set a controlling terminal"
    # The child leads its own session on the terminal.
    run_fl run --pty -- sh -c 'exec cat /proc/self/stat' </dev/null
    expect_status 0
    local pid sid
    pid=$(out_lines | awk '{ print $1 }')
    sid=$(out_lines | sed 's/^[0-9]* (.*) //' | awk '{ print $4 }')
    [ "$sid" = "$pid" ] || fail "sid $sid, pid $pid"
}

case_pty_every_stream_redirected() {
    # Nothing would be on the terminal: refused, in plain words.
    expect_bad_option run --pty --stdin /dev/null --stdout /dev/null --stderr /dev/null -- true
    expect_err_has "--pty: no standard stream is left on the terminal"
    # An --fd of 0-2 takes that stream off the terminal too.
    expect_bad_option run --pty --fd 0=0 --fd 1=1 --stderr /dev/null -- true
    expect_err_has "--pty: no standard stream is left on the terminal"
}

case_pty_terminal_reopened() {
    need_pty
    # A program that closes every fd of its terminal, then opens it again
    # (/dev/tty), is still relayed: forkless holds the terminal side too.
    timeout -s KILL 20 "$FL" run --pty -- sh -c 'exec </dev/null >/dev/null 2>/dev/null
sleep 0.5; exec </dev/tty >/dev/tty 2>&1; echo back' </dev/null >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    [ "$(out_lines)" = back ] || fail "the program printed \"$(out)\"; stderr: $(err)"
}

case_pty_drain_ends_while_a_descendant_writes() {
    need_pty
    # A descendant that keeps writing to the terminal after the program
    # has ended is given up at the drain's deadline.
    rm -f "$T/pid"
    timeout -s KILL 20 "$FL" run --pty -- sh -c 'sh -c "trap \"\" HUP; echo \$\$ >\"\$0\"
while :; do echo x; sleep 0.05; done" "$0" &
while ! [ -s "$0" ]; do sleep 0.05; done; echo started' "$T/pid" </dev/null >"$T/out" 2>"$T/err"
    STATUS=$?
    file_has_pid "$T/pid" && BACKGROUND_PIDS+=("$(cat "$T/pid")")
    [ "$STATUS" -eq 0 ] || fail "exit status $STATUS, expected 0; stderr: $(err)"
    out_lines | grep -qx started || fail "the program printed \"$(out)\""
}

case_pty_sigterm_while_stdout_is_full() {
    need_pty
    # Nobody reads forkless's stdout: SIGTERM still ends the program and
    # forkless, whose last writes are given up at the drain's deadline.
    rm -f "$T/flpid" "$T/rc"
    { sh -c 'echo $$ >"$0"; exec "$1" run --pty -- head -c 10000000 /dev/zero' "$T/flpid" "$FL" \
        </dev/null 2>"$T/err"; echo $? >"$T/rc"; } | sleep 100 &
    BACKGROUND_PIDS+=("$!")
    wait_for file_has_pid "$T/flpid"
    BACKGROUND_PIDS+=("$(cat "$T/flpid")")
    wait_for pgrep -P "$(cat "$T/flpid")" head
    kill -TERM "$(cat "$T/flpid")"
    wait_for test -s "$T/rc"
    expect_file "$T/rc" 143
}

case_pty_slow_reader_gets_everything() {
    need_pty
    # A reader of forkless's stdout that takes its time (longer than the
    # drain's deadline) still gets it all: the deadline is for a
    # descendant that holds the terminal, and only a signal to forkless
    # cuts a wait for the reader short. Whether the program has ended by
    # the time the reader wakes depends on how much the pipe, the pty and
    # the relay hold, so the reader does not wait for that end: it only
    # sleeps past the deadline.
    rm -f "$T/pid"
    timeout -s KILL 30 "$FL" run --pty -- sh -c 'echo $$ >"$0"; head -c 70000 /dev/zero; echo END' \
        "$T/pid" </dev/null 2>"$T/err" |
        { wait_for file_has_pid "$T/pid"; sleep 3; wc -c; } >"$T/out"
    STATUS=${PIPESTATUS[0]}
    expect_status 0
    [ "$(tr -d ' ' <"$T/out")" = 70005 ] || fail "the reader got $(out) bytes, not 70005"
}

case_pty_stdout_closed_hangs_up() {
    need_pty
    # The reader of forkless's stdout has gone (EPIPE): the relay stops
    # and the program's terminal hangs up, which ends yes by SIGHUP.
    timeout -s KILL 20 "$FL" run --pty -- yes </dev/null 2>"$T/err" | head -n 1 >"$T/out"
    STATUS=${PIPESTATUS[0]}
    expect_status 129
    [ "$(out_lines)" = y ] || fail "head printed \"$(out)\""
}

# Python that reads fd 0 a byte at a time into got, up to and with the
# first EOT (^D), or to an end of file.
READ_RAW_UNTIL_EOT='got = b""
while not got.endswith(b"\x04"):
    b = os.read(0, 1)
    if not b:
        break
    got += b'

case_pty_eof_in_non_canonical_mode() {
    # Input that is not a terminal ends in the EOF character even when the
    # program reads its terminal raw: it gets the byte, as from script(1).
    command -v python3 >/dev/null || skip "no python3 for a program that reads its terminal raw"
    need_pty
    rm -f "$T/raw"
    { wait_for test -s "$T/raw"; printf 'abc'; } |
        timeout -s KILL 20 "$FL" run --pty -- python3 -c '
import os, sys, tty
tty.setraw(0)
open(sys.argv[1], "w").write("raw\n")
'"$READ_RAW_UNTIL_EOT"'
sys.stdout.write(repr(got) + "\r\n")' "$T/raw" >"$T/out" 2>"$T/err"
    STATUS=${PIPESTATUS[1]}
    expect_status 0
    [ "$(out_lines)" = "b'abc\\x04'" ] || fail "the program read \"$(out)\"; stderr: $(err)"
}

case_pty_eof_reaches_a_program_that_goes_raw_after_reading_a_line() {
    # A shell's line editor: it reads a command in canonical mode, runs it,
    # then reads its terminal raw. The end of the input must still reach it
    # as the EOF character, not as the NUL byte that an end of file written
    # in canonical mode turns into once the terminal is raw.
    command -v python3 >/dev/null || skip "no python3 for a program that reads its terminal raw"
    need_pty
    printf 'a command\n' |
        timeout -s KILL 20 "$FL" run --pty -- python3 -c '
import os, sys, time, tty
line = sys.stdin.readline()
time.sleep(0.3)
tty.setraw(0)
'"$READ_RAW_UNTIL_EOT"'
sys.stdout.write(repr(line) + " " + repr(got.replace(b"\x00", b"")) + "\r\n")' >"$T/out" 2>"$T/err"
    STATUS=${PIPESTATUS[1]}
    expect_status 0
    [ "$(out_lines)" = "'a command\n' b'\x04'" ] || fail "the program read \"$(out)\"; stderr: $(err)"
}

case_pty_every_read_after_the_input_ends_gets_an_end() {
    # As from a pipe: the end of the input is an end for each reader, not
    # for the first one only.
    need_pty
    printf 'x\n' | timeout -s KILL 20 "$FL" run --pty -- sh -c 'cat; echo first; cat; echo second' \
        >"$T/out" 2>"$T/err"
    STATUS=${PIPESTATUS[1]}
    expect_status 0
    [ "$(out_lines | tr '\n' ' ')" = "x first second " ] || fail "printed \"$(out)\"; stderr: $(err)"
}

# tmux_start: a detached tmux session on a server of its own, running sh.
# tmux runs the pane's command with $SHELL -c, or, with no $SHELL, with the
# user's login shell, which for a user such as nobody is nologin: the
# session would end at once. So the server is given /bin/sh.
TMUX_SOCK=
tm() { SHELL=/bin/sh tmux -S "$TMUX_SOCK" "$@"; }
tmux_start() {
    command -v tmux >/dev/null || skip "tmux is not installed (apt-get install -y tmux)"
    need_pty
    # The scripts typed into the pane name files under $T, and the
    # server's socket path must fit in a sockaddr_un (108 bytes): under a
    # TMPDIR with a space or a long name, the case works in a short
    # directory of /tmp instead.
    case $T in
    *[!A-Za-z0-9/._-]* | ?????????????????????????????????????????????????????????????*)
        CLEAN_DIRS+=("$T")
        T=$(mktemp -d /tmp/fl-tmux.XXXXXX) || skip "no short directory for the tmux socket in /tmp"
        ;;
    esac
    TMUX_SOCK=$T/tmux.sock
    tm -f /dev/null new-session -d -s t -x 100 -y 30 "PS1='$ ' exec sh" ||
        skip "tmux cannot start a session here"
    trap 'tm kill-server 2>/dev/null; cleanup' EXIT
    tm has-session -t t 2>"$T/tmux-err" ||
        fail "the tmux session ended as soon as it started: $(cat "$T/tmux-err")"
}
# tmux_run SCRIPT: runs the file SCRIPT with a non-interactive sh in the
# pane: an interactive shell that sees its job die by SIGINT skips the
# rest of the line.
tmux_run() { tm send-keys -t t "sh '$1'" Enter; }
pane() { tm capture-pane -p -t t; }
pane_has() { pane | grep -qF -- "$1"; }
pane_has_twice() { [ "$(pane | grep -cF -- "$1")" -ge 2 ]; }
pane_size() { tm display -p -t t '#{pane_height} #{pane_width}'; }

case_pty_tmux_input_and_ctrl_c() {
    tmux_start
    cat >"$T/run.sh" <<EOF
stty -g >"$T/before"
"$FL" run -v --pty -- cat
echo \$? >"$T/rc"
stty -g >"$T/after"
EOF
    tmux_run "$T/run.sh"
    wait_for pane_has "forkless: launched"
    tm send-keys -t t "hello-pty" Enter
    # Echoed by the program's terminal, then written by cat.
    wait_for pane_has_twice hello-pty
    tm send-keys -t t C-c
    wait_for test -s "$T/after"
    [ "$(cat "$T/rc")" = 130 ] || fail "exit status $(cat "$T/rc"), expected 130"
    pane_has "killed by signal 2" || fail "forkless did not see the SIGINT: $(pane)"
    cmp -s "$T/before" "$T/after" ||
        fail "stty -g before: $(cat "$T/before"), after: $(cat "$T/after")"
}

case_pty_tmux_ctrl_c_reaches_the_child_once() {
    tmux_start
    cat >"$T/run.sh" <<EOF
"$FL" run --pty -- sh -c 'trap "echo INT >>$T/ints" INT; echo READY >$T/ready
while ! [ -s $T/ints ]; do sleep 0.1; done; sleep 1; exit 7'
echo \$? >"$T/rc"
EOF
    tmux_run "$T/run.sh"
    wait_for test -s "$T/ready"
    tm send-keys -t t C-c
    wait_for test -s "$T/rc"
    [ "$(cat "$T/rc")" = 7 ] || fail "exit status $(cat "$T/rc"), expected 7"
    [ "$(cat "$T/ints")" = INT ] || fail "the child's SIGINTs: $(cat "$T/ints")"
}

case_pty_tmux_resize() {
    tmux_start
    cat >"$T/run.sh" <<EOF
"$FL" run --pty -- sh -c 'stty size >$T/size0
trap "stty size >$T/winch; exit 5" WINCH; while :; do sleep 0.1; done'
echo \$? >"$T/rc"
EOF
    tmux_run "$T/run.sh"
    wait_for test -s "$T/size0"
    [ "$(cat "$T/size0")" = "$(pane_size)" ] || fail "the child started at $(cat "$T/size0")"
    tm resize-window -t t -x 90 -y 25
    wait_for test -s "$T/rc"
    [ "$(cat "$T/rc")" = 5 ] || fail "exit status $(cat "$T/rc"), expected 5"
    [ "$(cat "$T/winch")" = "$(pane_size)" ] ||
        fail "after the resize to $(pane_size) the child saw $(cat "$T/winch")"
}

case_pty_tmux_sigterm_restores_the_terminal() {
    tmux_start
    cat >"$T/run.sh" <<EOF
stty -g >"$T/before"
sh -c 'echo \$\$ >$T/flpid; exec "$FL" run --pty -- sleep 100'
echo \$? >"$T/rc"
stty -g >"$T/after"
EOF
    tmux_run "$T/run.sh"
    wait_for file_has_pid "$T/flpid"
    wait_for pgrep -P "$(cat "$T/flpid")" sleep
    kill -TERM "$(cat "$T/flpid")"
    wait_for test -s "$T/after"
    [ "$(cat "$T/rc")" = 143 ] || fail "exit status $(cat "$T/rc"), expected 143"
    cmp -s "$T/before" "$T/after" ||
        fail "stty -g before: $(cat "$T/before"), after: $(cat "$T/after")"
}

case_pty_tmux_size_given_on_a_terminal() {
    # --pty-size wins over the size of forkless's own terminal.
    tmux_start
    cat >"$T/run.sh" <<EOF
"$FL" run --pty --pty-size 33x121 -- sh -c 'stty size >$T/size'
echo \$? >"$T/rc"
EOF
    tmux_run "$T/run.sh"
    wait_for test -s "$T/rc"
    expect_file "$T/rc" 0
    expect_file "$T/size" "33 121"
}

# pty_tmux_stop: forkless --pty on the pane's terminal, stopped by a
# SIGTSTP from elsewhere (kill, not ^Z: that goes to the program). Sets
# FLPID and PANE_TTY; $T/before holds the terminal's settings before.
pty_tmux_stop() {
    tmux_start
    cat >"$T/run.sh" <<EOF
stty -g >"$T/before"
sh -c 'echo \$\$ >$T/flpid; exec "$FL" run --pty -- sh -c "echo READY >$T/ready; while :; do sleep 0.1; done"'
echo \$? >"$T/rc"
EOF
    tmux_run "$T/run.sh"
    wait_for test -s "$T/ready"
    FLPID=$(cat "$T/flpid")
    BACKGROUND_PIDS+=("$FLPID")
    PANE_TTY=$(tm display -p -t t '#{pane_tty}')
    kill -TSTP "$FLPID"
    wait_for is_stopped "$FLPID"
}
is_stopped() { [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)" = T ]; }
pane_termios() { stty -g -F "$PANE_TTY"; }
pane_is_raw() { stty -a -F "$PANE_TTY" | grep -qw -- -icanon; }

case_pty_tmux_stopped_restores_the_terminal() {
    pty_tmux_stop
    [ "$(pane_termios)" = "$(cat "$T/before")" ] ||
        fail "stopped, the terminal is $(pane_termios), before $(cat "$T/before")"
    kill -CONT "$FLPID"
}

case_pty_tmux_continued_is_raw_again() {
    pty_tmux_stop
    kill -CONT "$FLPID"
    wait_for pane_is_raw
    kill -TERM "$FLPID"
    wait_for test -s "$T/rc"
}

# fg of a job that bg had continued: a shell hands the terminal over and
# sends no SIGCONT (the job runs already). forkless --pty, stopped by a
# SIGTSTP from elsewhere, continued in the background, then given the
# terminal, must make it raw again, with no read of the shell's input
# meanwhile (that would stop it, SIGTTIN).
case_pty_fg_after_bg_is_raw_again() {
    need_pty_python
    PYTHONPATH="$T" python3 - "$FL" >"$T/out" 2>"$T/err" <<'EOF'
import os, pty, re, select, signal, sys, termios, time
from ptyout import foreground_job
pid, fd = pty.fork()
if pid == 0:
    job = foreground_job([sys.argv[1], "run", "--pty", "--", "cat"])
    os.write(1, b"<job %d %s>\n" % (job, os.ttyname(0).encode()))
    _, status = os.waitpid(job, os.WUNTRACED)
    os.tcsetpgrp(0, os.getpgrp())
    os.write(1, b"<stopped %d>\n" % os.WIFSTOPPED(status))
    os.killpg(job, signal.SIGCONT)        # bg
    time.sleep(0.3)
    os.write(1, b"<bg>\n")
    time.sleep(0.3)
    os.tcsetpgrp(0, job)                  # fg: the terminal, no SIGCONT
    os.write(1, b"<fg>\n")
    _, status = os.waitpid(job, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        os.write(1, b"<stopped again>\n")
        os.killpg(job, signal.SIGKILL)
        os._exit(1)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    os.write(1, b"<exit %d>\n" % code)
    os._exit(0)
seen = b""
def pump(secs):
    global seen
    if select.select([fd], [], [], secs)[0]:
        try:
            seen += os.read(fd, 4096)
        except OSError:
            pass
def expect(s, secs=20):
    end = time.time() + secs
    while s.encode() not in seen:
        if time.time() > end:
            return False
        pump(0.1)
    return True
def fail(why):
    sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
    print("FAIL: " + why)
    os.kill(pid, signal.SIGKILL)
    sys.exit(1)
def until_raw(tty, secs):
    end = time.time() + secs
    while termios.tcgetattr(tty)[3] & termios.ICANON:
        if b"<stopped again>" in seen or time.time() > end:
            return False
        pump(0.05)
    return True
# The line ends in "\n" alone where forkless has made the terminal raw
# already.
end = time.time() + 20
while not re.search(rb"<job \d+ \S+>\r?\n", seen):
    if time.time() > end:
        fail("no job line")
    pump(0.1)
words = seen.split(b"<job ")[1].split(b">")[0].split()
job, tty = int(words[0]), os.open(words[1], os.O_RDONLY | os.O_NOCTTY)
if not until_raw(tty, 20):
    fail("never raw at the start")
os.kill(job, signal.SIGTSTP)
if not expect("<stopped 1>"):
    fail("not stopped")
if not expect("<bg>"):
    fail("no bg")
os.write(fd, b"typed for the shell\n")  # the job's to leave alone
if not expect("<fg>"):
    fail("no fg")
if not until_raw(tty, 10):
    fail("the terminal is not raw after fg")
os.write(fd, b"\x04")                     # raw: to the program's terminal, cat's end
if not expect("<exit"):
    fail("no exit")
expect("\n", 5)
sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
EOF
    STATUS=$?
    [ "$STATUS" -eq 0 ] || fail "$(cat "$T/out") $(err)"
    grep -q '<exit 0>' "$T/out" || fail "forkless did not exit 0: $(cat "$T/out")"
}

# A program that stops itself (kill -STOP, bash's suspend) cannot be
# continued by its own terminal's ^Z or ^C (its group is orphaned): forkless
# stops too, as script(1) does, with the shell's terminal as it was, and
# once continued (fg) continues the program. Also with --kill-tree, where
# the main thread reads SIGCHLD as well.
case_pty_program_stopped_stops_forkless() {
    need_pty_python
    for mode in plain --kill-tree stdin-not-a-terminal p_pidfd-refused; do
        PYTHONPATH="$T" python3 - "$FL" $mode >"$T/out" 2>"$T/err" <<'EOF'
import os, pty, signal, sys, termios
from ptyout import foreground_job, print_until
fl, mode = sys.argv[1], sys.argv[2]
argv = [fl, "run", "--pty"] + (["--kill-tree"] if mode == "--kill-tree" else []) + \
       ["--", "sh", "-c", "sleep 0.2; kill -STOP $$; echo resumed"]
if mode == "stdin-not-a-terminal":
    argv = ["/bin/sh", "-c", 'exec "$@" </dev/null', "sh"] + argv
pid, fd = pty.fork()
if pid == 0:
    job = foreground_job(argv, 38 if mode == "p_pidfd-refused" else 0)   # ENOSYS
    _, status = os.waitpid(job, os.WUNTRACED)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 77:
        os.write(1, b"<no filter><exit>\n")
        os._exit(0)
    os.tcsetpgrp(0, os.getpgrp())
    lines = termios.tcgetattr(0)[3] & termios.ICANON != 0
    os.write(1, b"<stopped %d lines %d>\n" % (os.WIFSTOPPED(status), lines))
    os.tcsetpgrp(0, job)                  # fg
    os.killpg(job, signal.SIGCONT)
    _, status = os.waitpid(job, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    os.write(1, b"<exit %d>\n" % code)
    os._exit(0)
print_until(fd, pid, b"<exit", 20)
EOF
        if grep -q '<no filter>' "$T/out"; then
            echo "SKIP part: no seccomp filter for $mode here"
            continue
        fi
        grep -q '<stopped 1 lines 1>' "$T/out" ||
            fail "forkless run --pty ($mode) did not stop with its program, the terminal as it was: $(cat "$T/out") $(err)"
        grep -q '^resumed$' "$T/out" && grep -q '<exit 0>' "$T/out" ||
            fail "forkless run --pty ($mode): the program was not continued: $(cat "$T/out") $(err)"
    done
}

# Once nobody reads forkless's stdout, the program's terminal hangs up; a
# program that outlives that (it ignores SIGHUP) and then stops itself is
# still followed: forkless stops, and continued, continues it.
case_pty_program_stopped_after_the_hang_up_stops_forkless() {
    need_pty_python
    PYTHONPATH="$T" python3 - "$FL" >"$T/out" 2>"$T/err" <<'EOF'
import os, pty, signal, sys
from ptyout import foreground_job, print_until
fl = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    r, w = os.pipe()
    os.set_inheritable(w, True)
    saved = os.dup(1)
    os.dup2(w, 1)
    job = foreground_job([fl, "run", "--pty", "--", "sh", "-c",
                          "trap '' HUP; echo x; sleep 0.3; echo y; sleep 0.3; kill -STOP $$; echo z"])
    os.dup2(saved, 1)
    os.close(w)
    os.read(r, 1)                         # x: then nobody reads
    os.close(r)
    _, status = os.waitpid(job, os.WUNTRACED)
    os.tcsetpgrp(0, os.getpgrp())
    os.write(1, b"<stopped %d>\n" % os.WIFSTOPPED(status))
    if os.WIFSTOPPED(status):
        os.tcsetpgrp(0, job)
        os.killpg(job, signal.SIGCONT)
        _, status = os.waitpid(job, 0)
    os.write(1, b"<exit>\n")
    os._exit(0)
print_until(fd, pid, b"<exit", 20)
EOF
    grep -q '<stopped 1>' "$T/out" || fail "forkless did not stop with its program: $(cat "$T/out") $(err)"
    grep -q '<exit>' "$T/out" || fail "forkless never ended: $(cat "$T/out") $(err)"
}

# A terminal on stdin that is not forkless's controlling terminal is raw,
# also again after a stop from elsewhere, and read: there is no
# foreground of forkless's on it to wait for.
case_pty_input_from_a_terminal_not_its_own_is_read() {
    need_pty_python
    PYTHONPATH="$T" python3 - "$FL" >"$T/out" 2>"$T/err" <<'EOF'
import os, pty, signal, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    other, other_side = os.openpty()   # not this session's terminal
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        os.dup2(other_side, 0)
        os.execv(sys.argv[1], [sys.argv[1], "run", "--pty", "--", "head", "-c", "3"])
    try:
        os.setpgid(job, job)
    except PermissionError:
        pass
    def until(what, secs=20):
        end = time.time() + secs
        while not what() and time.time() < end:
            time.sleep(0.05)
        return what()
    def raw():
        return not termios.tcgetattr(other_side)[3] & termios.ICANON
    def say(s):
        os.write(1, s.encode() + b"\n")
    if not until(raw):
        say("<never raw>")
    os.kill(job, signal.SIGTSTP)
    _, status = os.waitpid(job, os.WUNTRACED)
    if not os.WIFSTOPPED(status) or raw():
        say("<not stopped, or still raw>")
    os.kill(job, signal.SIGCONT)
    if not until(raw):
        say("<not raw after the stop>")
    os.write(other, b"hello\n")
    _, status = os.waitpid(job, 0)
    say("<exit %d>" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)))
    os._exit(0)
from ptyout import print_until
print_until(fd, pid, b"<exit", 30)
EOF
    # The program's terminal echoes the line, then head writes its 3
    # bytes, and forkless exits 0; no "<never raw>" or "<not ...>".
    [ "$(cat "$T/out")" = "$(printf 'hello\nhel<exit 0>')" ] || fail "$(cat "$T/out") $(err)"
}

# ---------------------------------------------------------------- --time

TIME_LINE='^forkless: elapsed [0-9]+\.[0-9]{3}s user [0-9]+\.[0-9]{3}s sys [0-9]+\.[0-9]{3}s maxrss [0-9]+KiB$'
expect_time_line() {
    grep -qE "$TIME_LINE" "$T/err" || fail "no --time line on stderr: $(err)"
}

case_time_reports() {
    run_fl run --time -- sh -c 'exit 3'
    expect_status 3
    expect_time_line
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than the one line: $(err)"
}

case_time_after_signal() {
    # The line comes before forkless dies by the program's signal.
    wait_status "$T/how" "$FL" run --time -- sh -c 'kill -USR1 $$'
    expect_file "$T/how" "signal 10"
    expect_time_line
}

case_time_after_timeout() {
    run_fl run --time --timeout 0.2 -- sleep 100
    expect_status 124
    expect_time_line
}

case_time_maxrss() {
    # The peak RSS is the program's: 64 MiB touched shows as at least that.
    command -v perl >/dev/null || skip "no perl to use memory"
    run_fl run --time -- perl -e 'my $x = "a" x (64 << 20); exit 0'
    expect_status 0
    local kib
    kib=$(sed -n 's/.* maxrss \([0-9]*\)KiB$/\1/p' "$T/err")
    [ -n "$kib" ] && [ "$kib" -ge 65536 ] || fail "maxrss ${kib:-none} KiB: $(err)"
}

# ---------------------------------------------------------------- --kill-tree

# A descendant that leaves the program's process group and session
# (setsid), writes its pid to $T/pid and runs its last words ($1, shell).
SETSID_DESCENDANT='setsid sh -c "$1; echo \$\$ >\"\$0\"; while :; do sleep 0.05; done" "$0" &'

# kill_tree_run FORKLESS-OPTIONS... -- SCRIPT: runs sh -c SCRIPT with
# $0 = $T/pid and $1 = $KILL_TREE_WORDS, and notes the descendant's pid.
kill_tree_run() {
    rm -f "$T/pid" "$T/flag"
    timeout -s KILL 60 "$FL" run "$@" "$T/pid" "${KILL_TREE_WORDS:-:}" >"$T/out" 2>"$T/err"
    STATUS=$?
    file_has_pid "$T/pid" || fail "the descendant never started: $(err)"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
}

# kill_tree_timed_out FORKLESS-OPTIONS... -- SCRIPT: as kill_tree_run, but
# the time is up (SIGALRM, which forkless takes as timeout(1) does) once the
# descendant has written its pid: a fixed --timeout could end before a busy
# machine had started it.
kill_tree_timed_out() {
    rm -f "$T/pid" "$T/flag"
    time_up_when_started "$FL" run --timeout 1h "$@" "$T/pid" "${KILL_TREE_WORDS:-:}"
}

case_kill_tree_timeout_setsid() {
    kill_tree_timed_out --kill-tree -- sh -c "$SETSID_DESCENDANT sleep 100"
    expect_status 124
    is_dead "$(cat "$T/pid")" || fail "the setsid descendant outlived forkless"
}

case_no_kill_tree_setsid_survives() {
    # The contrast: without --kill-tree it is out of reach, as under timeout(1).
    kill_tree_timed_out -- sh -c "$SETSID_DESCENDANT sleep 100"
    expect_status 124
    is_alive "$(cat "$T/pid")" || fail "the setsid descendant died without --kill-tree"
    kill -KILL "$(cat "$T/pid")"
}

case_kill_tree_double_fork() {
    # A subshell that ends at once leaves an orphan: forkless adopts it.
    kill_tree_timed_out --kill-tree -- \
        sh -c '(sh -c "echo \$\$ >\"\$0\"; exec sleep 100" "$0" &); sleep 100'
    expect_status 124
    is_dead "$(cat "$T/pid")" || fail "the double-forked descendant outlived forkless"
}

case_kill_tree_a_descendant_handed_over_during_the_reap() {
    # A descendant that ends while --kill-tree reaps hands its own child to
    # forkless after the list was read: that one must be stopped too.
    # strace slows each waitid() so that the hand-over falls in the pass.
    need_strace
    cat >"$T/tree.sh" <<'SH'
# $1: the pid file. A session of its own that ignores TERM and ends in
# 0.5 s, and its child, which takes TERM and would sleep on.
setsid sh -c 'trap "" TERM; (trap - TERM; exec sh -c "echo \$\$ >\"\$0\"; exec sleep 399" "$0") & sleep 0.5' "$1" &
while [ ! -s "$1" ]; do sleep 0.01; done
exit 0
SH
    rm -f "$T/pid"
    # LeakSanitizer (a sanitizer build) stops the world with ptrace, which
    # strace holds: no leak check under it.
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        strace -f -o /dev/null -e trace=waitid -e inject=waitid:delay_enter=80000 \
        "$FL" run --kill-tree -- sh "$T/tree.sh" "$T/pid" >"$T/out" 2>"$T/err"
    STATUS=$?
    file_has_pid "$T/pid" || fail "the descendant never started: $(err)"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    expect_status 0
    is_dead "$(cat "$T/pid")" || fail "the descendant handed over during the reap outlived forkless"
}

case_kill_tree_normal_exit() {
    # The program exits on its own: what it left running is stopped too,
    # and forkless exits as the program did.
    kill_tree_run --kill-tree -- sh -c "$SETSID_DESCENDANT"'
        while [ ! -s "$0" ]; do sleep 0.05; done; exit 3'
    expect_status 3
    is_dead "$(cat "$T/pid")" || fail "the descendant outlived forkless"
}

case_kill_tree_term_first() {
    # The descendant gets --signal (TERM) first, and time to act on it.
    KILL_TREE_WORDS='trap "echo got-term >\"\$0.flag\"; exit" TERM' \
        kill_tree_run --kill-tree -- sh -c "$SETSID_DESCENDANT"'
            while [ ! -s "$0" ]; do sleep 0.05; done'
    expect_status 0
    expect_file "$T/pid.flag" got-term
}

case_kill_tree_kill_after() {
    # One that ignores TERM gets SIGKILL at --kill-after.
    KILL_TREE_WORDS='trap "" TERM' \
        kill_tree_run --kill-tree --kill-after 0.3 -- sh -c "$SETSID_DESCENDANT"'
            while [ ! -s "$0" ]; do sleep 0.05; done'
    expect_status 0
    is_dead "$(cat "$T/pid")" || fail "the descendant that ignores TERM outlived forkless"
}

# signal_when_handed_over FL_PID SIG: once the descendant of the forkless
# FL_PID (in the background) that wrote $T/pid is handed to it (the
# subshell that started it has ended), sends forkless SIG and waits for it,
# its status in STATUS.
signal_when_handed_over() {
    BACKGROUND_PIDS+=("$1")
    wait_for file_has_pid "$T/pid"
    BACKGROUND_PIDS+=("$(cat "$T/pid")")
    wait_for grep -qw "$(cat "$T/pid")" /proc/"$1"/task/*/children
    kill -"$2" "$1"
    wait "$1"
    STATUS=$?
}

case_kill_tree_passes_signals() {
    # A descendant already handed to forkless gets the signals forkless
    # passes on, as the program does. (USR1 is not its stop signal: once
    # the program has ended it gets TERM as well, which it ignores here,
    # so that the TERM cannot cut its USR1 trap short.)
    rm -f "$T/pid" "$T/pid.flag"
    "$FL" run --kill-tree -- sh -c '
        (setsid sh -c "trap \"\" TERM; trap \"echo got-usr1 >\\\"\$0.flag\\\"; exit\" USR1; echo \$\$ >\"\$0\"
                       while :; do sleep 0.05; done" "$0" &)
        while :; do sleep 0.05; done' "$T/pid" >"$T/out" 2>"$T/err" &
    signal_when_handed_over $! USR1
    expect_status $((128 + 10))
    expect_file "$T/pid.flag" got-usr1
}

case_kill_tree_reaps_while_running() {
    # An orphan that ends while the program runs is reaped then, not left
    # a zombie until the end.
    rm -f "$T/pid"
    "$FL" run --kill-tree -- sh -c '(sh -c "echo \$\$ >\"\$0\"" "$0" &); sleep 100' "$T/pid" \
        >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid"
    wait_for test ! -e "/proc/$(cat "$T/pid")"
    is_alive "$fl_pid" || fail "forkless ended: $(err)"
    # A TERM ends the tree (the sleep too); a KILL at cleanup would not.
    kill -TERM "$fl_pid"
    wait "$fl_pid"
}

case_kill_tree_stop_signal_after_hup() {
    # A HUP passed on to a descendant is not its stop signal: once the
    # program has ended, it still gets TERM (not SIGKILL at the deadline).
    rm -f "$T/pid" "$T/log"
    "$FL" run --kill-tree -- sh -c '
        trap "exit 0" HUP
        (setsid sh -c "trap \"echo HUP >>\\\"\$0.log\\\"\" HUP
                       trap \"echo TERM >>\\\"\$0.log\\\"; exit\" TERM
                       echo \$\$ >\"\$0\"; while :; do sleep 0.05; done" "$0" &)
        while :; do sleep 0.05; done' "$T/pid" >"$T/out" 2>"$T/err" &
    signal_when_handed_over $! HUP
    expect_status 0
    grep -qx TERM "$T/pid.log" || fail "the descendant never got TERM; its log: $(cat "$T/pid.log" 2>&1)"
}

case_kill_tree_spares_inherited_children() {
    # A child forkless inherited across the exec that started it is not
    # part of the program's tree: it is neither signalled nor reaped.
    rm -f "$T/pid"
    timeout -s KILL 60 sh -c 'sleep 3 & echo $! >"$1"; exec "$2" run --kill-tree -- true' \
        sh "$T/pid" "$FL" >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    file_has_pid "$T/pid" || fail "no pid of the sleep"
    local pid
    pid=$(cat "$T/pid")
    # Its parent (forkless) has exited: it is alive, or a zombie of init's
    # if it ended by itself, which 3 s leave no time for.
    [ -e "/proc/$pid" ] && [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$pid/stat")" != Z ] ||
        fail "the inherited sleep did not survive: $(err)"
    kill "$pid" 2>/dev/null
}

case_kill_tree_refuses_foreign_proc() {
    # In a new pid namespace without a /proc of its own, /proc's pids are
    # the host's: --kill-tree is refused before anything starts.
    command -v unshare >/dev/null || skip "no unshare"
    local u=(unshare --pid --fork)
    "${u[@]}" true 2>/dev/null || u=(unshare --user --map-root-user --pid --fork)
    "${u[@]}" true 2>/dev/null || skip "unshare --pid --fork does not work here"
    rm -f "$T/ran"
    "${u[@]}" "$FL" run --kill-tree -- touch "$T/ran" >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 125
    expect_err_has "--kill-tree: /proc is not of forkless's pid namespace"
    [ ! -e "$T/ran" ] || fail "the program ran"
}

case_kill_tree_cgroup() {
    # With --cgroup the cgroup is stopped: TERM reaches a descendant whose
    # parent traps it and lives on, which the tree alone would reach
    # only once that parent is killed, and with SIGKILL. The pid is written
    # once the descendant's trap is set (its .ready), or the TERM could come
    # first on a busy machine.
    make_cgroup || skip "no writable cgroup"
    KILL_TREE_WORDS='trap : TERM; { sh -c "trap \"echo got-term >\\\"\$0.flag\\\"; exit\" TERM; : >\"\$0.ready\"; while :; do sleep 0.05; done" "$0" & }; while [ ! -e "$0.ready" ]; do sleep 0.05; done' \
        kill_tree_run --kill-tree --kill-after 2 --cgroup "$CGROUP_DIR" -- sh -c "$SETSID_DESCENDANT"'
            while [ ! -s "$0" ]; do sleep 0.05; done'
    wait_for is_dead "$(cat "$T/pid")"
    rmdir "$CGROUP_DIR" 2>/dev/null
    expect_status 0
    expect_file "$T/pid.flag" got-term
}

case_kill_tree_cgroup_found_ended_past_the_kill_deadline() {
    # The program ends by itself after the timeout's TERM while forkless is
    # stopped, and forkless goes on only past the KILL deadline: the cgroup
    # is still stopped (SIGKILL, no grace left) and the program reaped, not
    # a refused stop (exit 125) that leaves the cgroup's other processes.
    make_cgroup || skip "no writable cgroup"
    rm -f "$T/prog" "$T/sleep" "$T/term" "$T/go"
    "$FL" run --cgroup "$CGROUP_DIR" --kill-tree --timeout 60 -k 0.3 -- sh -c '
        trap ": >\"$0/term\"" TERM; echo $$ >"$0/prog"
        setsid sleep 60 & echo $! >"$0/sleep"
        while [ ! -e "$0/term" ] || [ ! -e "$0/go" ]; do sleep 0.05; done' "$T" \
        >"$T/out" 2>"$T/err" &
    local fl=$!
    wait_for file_has_pid "$T/sleep"
    BACKGROUND_PIDS+=("$(cat "$T/sleep")")
    kill -ALRM "$fl"    # the time is up, as timeout(1) takes it
    wait_for test -e "$T/term"
    kill -STOP "$fl"
    : >"$T/go"
    wait_for is_dead "$(cat "$T/prog")"
    sleep 0.5           # past the KILL deadline, 0.3 s after the TERM
    kill -CONT "$fl"
    wait "$fl"
    STATUS=$?
    wait_for is_dead "$(cat "$T/sleep")"
    rmdir "$CGROUP_DIR" 2>/dev/null
    expect_status 124
    ! grep -q '^forkless:' "$T/err" || fail "stderr: $(err)"
}

case_kill_tree_cgroup_that_holds_processes_is_refused() {
    # Its stop ends every process in the cgroup: one that was there before
    # forkless started is not the program's, and must live on.
    make_cgroup || skip "no writable cgroup"
    sleep 60 &
    local bystander=$!
    BACKGROUND_PIDS+=("$bystander")
    echo "$bystander" >"$CGROUP_DIR/cgroup.procs" || skip "cannot move a process into $CGROUP_DIR"
    run_fl run --kill-tree --cgroup "$CGROUP_DIR" -- true
    local alive=yes
    is_alive "$bystander" || alive=no
    kill -KILL "$bystander" 2>/dev/null
    wait "$bystander" 2>/dev/null
    rmdir "$CGROUP_DIR" 2>/dev/null
    expect_status 125
    expect_err_has "--kill-tree --cgroup $CGROUP_DIR: the cgroup already holds 1 process (pid $bystander), which its stop would end too"
    [ ! -s "$T/out" ] || fail "ran something: $(out)"
    [ "$alive" = yes ] || fail "the process that was in the cgroup before was stopped"
}

case_kill_tree_cgroup_with_processes_below_is_refused() {
    # cgroup.kill ends the whole subtree: a process in a cgroup below,
    # where the target's own cgroup.procs does not list it, is reached too.
    make_cgroup || skip "no writable cgroup"
    [ -e "$CGROUP_DIR/cgroup.events" ] || { rmdir "$CGROUP_DIR"; skip "not cgroup v2"; }
    mkdir "$CGROUP_DIR/below" || { rmdir "$CGROUP_DIR"; skip "cannot make a cgroup below"; }
    sleep 60 &
    local bystander=$!
    BACKGROUND_PIDS+=("$bystander")
    echo "$bystander" >"$CGROUP_DIR/below/cgroup.procs" ||
        { rmdir "$CGROUP_DIR/below" "$CGROUP_DIR"; skip "cannot move a process into a cgroup"; }
    run_fl run --kill-tree --cgroup "$CGROUP_DIR" -- true
    local alive=yes
    is_alive "$bystander" || alive=no
    kill -KILL "$bystander" 2>/dev/null
    wait "$bystander" 2>/dev/null
    wait_for rmdir "$CGROUP_DIR/below"
    rmdir "$CGROUP_DIR" 2>/dev/null
    expect_status 125
    expect_err_has "--kill-tree --cgroup $CGROUP_DIR: the cgroup already holds processes (in a cgroup below it)"
    [ "$alive" = yes ] || fail "the process in the cgroup below was stopped"
}

# ---------------------------------------------------------------- pipe

case_pipe_help() {
    run_fl pipe --help
    expect_status 0
    grep -q '^Usage: forkless pipe ' "$T/out" || fail "no usage: $(out)"
    run_fl --help
    grep -q 'forkless pipe ' "$T/out" || fail "forkless --help lacks pipe: $(out)"
    run_fl pipe --version
    expect_status 0
    [ "$(out)" = "$("$FL" --version)" ] || fail "pipe --version: $(out)"
}

case_pipe_bad_command_lines() {
    expect_bad_option pipe
    expect_err_has "no command given"
    expect_bad_option pipe echo a ::: ::: cat
    expect_err_has "stage 2 is empty"
    expect_bad_option pipe echo a :::
    expect_err_has "stage 2 is empty"
    expect_bad_option pipe ::: cat
    expect_err_has "stage 1 is empty"
    expect_bad_option pipe --separator @@ echo a @@ @@ cat
    expect_err_has "stage 2 is empty (two \"@@\" in a row"
    expect_bad_option pipe --separator '' echo a
    expect_bad_option pipe --timeout x echo a
    expect_err_has '--timeout: invalid duration "x"'
    expect_bad_option pipe --signal NOPE echo a
    expect_err_has '--signal: invalid signal "NOPE"'
    expect_bad_option pipe --frob echo a
    expect_err_has "unknown option --frob (see forkless pipe --help)"
    expect_bad_option pipe --timeout
    expect_err_has "--timeout needs an argument"
}

case_pipe_runs_stages() {
    run_fl pipe printf 'b\na\n' ::: sort ::: tr a-z A-Z
    expect_status 0
    expect_out "$(printf 'A\nB')"
    expect_err_empty
    run_fl pipe printf 'a\nb\n' ::: grep b
    expect_status 0
    expect_out b
}

case_pipe_stdio_inherited() {
    # Stage 1 reads forkless's stdin, the last writes its stdout, and
    # every stage's stderr is forkless's.
    echo hello | "$FL" pipe cat ::: sh -c 'tr a-z A-Z; echo oops >&2' >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 0
    expect_out HELLO
    [ "$(err)" = oops ] || fail "stderr \"$(err)\", expected \"oops\""
}

case_pipe_pipefail_status() {
    # The rightmost stage that did not exit 0; each stage that fails
    # reads its input first, so no SIGPIPE comes into it.
    run_fl pipe sh -c 'exit 3' ::: sh -c 'cat >/dev/null; exit 4' ::: true
    expect_status 4
    run_fl pipe sh -c 'exit 3' ::: cat
    expect_status 3
    run_fl pipe true ::: sh -c 'cat; exit 5' ::: cat
    expect_status 5
    run_fl pipe true ::: true ::: true
    expect_status 0
}

case_pipe_last() {
    run_fl pipe --last sh -c 'exit 3' ::: true
    expect_status 0
    run_fl pipe --last true ::: sh -c 'exit 6'
    expect_status 6
    run_fl pipe --last sh -c 'exit 3' ::: sh -c 'cat >/dev/null; exit 4' ::: true
    expect_status 0
}

case_pipe_stage_not_found() {
    run_fl pipe true ::: forkless-no-such-program
    expect_status 127
    expect_err_has 'forkless: pipe: stage 2: exec "forkless-no-such-program": No such file or directory'
}

case_pipe_stage_cannot_execute() {
    printf '#!/bin/sh\necho ran\n' >"$T/noexec"
    chmod 644 "$T/noexec"
    run_fl pipe "$T/noexec" ::: cat
    expect_status 126
    expect_err_has "forkless: pipe: stage 1: exec \"$T/noexec\""
    [ ! -s "$T/out" ] || fail "a stage ran: $(out)"
}

case_pipe_stage_that_fails_stops_the_others() {
    # Stage 2 cannot start once stage 1 runs (fl_spawn() returns after
    # the exec): stage 1 is killed and reaped, and nothing is left.
    local secs="100.$$$RANDOM"
    run_fl pipe sleep "$secs" ::: forkless-no-such-program
    expect_status 127
    local f
    for f in /proc/[0-9]*/cmdline; do
        if tr '\0' ' ' <"$f" 2>/dev/null | grep -q "^sleep $secs \$"; then
            fail "stage 1 is still there: $f"
        fi
    done
}

case_pipe_separator_literal() {
    run_fl pipe --separator @@ echo ::: @@ cat
    expect_status 0
    expect_out ":::"
    run_fl pipe --separator @@ printf '%s\n' a ::: b @@ grep -F :::
    expect_status 0
    expect_out ":::"
}

case_pipe_sigpipe_status() {
    # As bash's pipefail: yes dies of SIGPIPE once head has gone, and
    # that is the status, 128+13; forkless dies by SIGPIPE itself, as
    # `forkless run` does by its child's signal.
    run_fl pipe yes ::: head -1
    expect_status $((128 + 13))
    expect_out y
    wait_status "$T/how" "$FL" pipe yes ::: head -1
    expect_file "$T/how" "signal 13"
    run_fl pipe --last yes ::: head -1
    expect_status 0
    expect_out y
}

case_pipe_timeout() {
    # The whole pipeline is stopped: every stage, and what a stage left
    # in the group; 124 as timeout(1).
    time_up_when_ready "$T/p1" "$T/p2" "$T/p3" -- "$FL" pipe --timeout 1h \
        sh -c 'echo $$ >"$1"; exec sleep 100' sh "$T/p1" \
        ::: sh -c 'sleep 100 & echo $! >"$2"; echo $$ >"$1"; cat >/dev/null; wait' sh "$T/p2" "$T/p3"
    expect_status 124
    local f
    for f in p1 p2 p3; do
        wait_for is_dead "$(cat "$T/$f")"
    done
}

case_pipe_timeout_kill() {
    # A stage that ignores SIGTERM gets SIGKILL at --kill-after: 128+9.
    time_up_when_started "$FL" pipe --timeout 1h --kill-after 0.2 \
        sh -c 'trap "" TERM; echo $$ >"$1"; while :; do sleep 0.05; done' sh "$T/pid" ::: cat
    expect_status 137
    wait_for is_dead "$(cat "$T/pid")"
    run_fl pipe --timeout 0.2 --signal KILL sleep 100 ::: cat
    expect_status 137
}

case_pipe_timeout_after_a_stage_killed_itself_is_124() {
    # A stage that died of its own SIGKILL before the time was up says
    # nothing of the stop: the timeout's SIGTERM ended the rest, 124.
    run_fl pipe --timeout 0.5 sh -c 'kill -KILL $$' ::: sleep 100
    expect_status 124
    # Nor does the SIGKILL that only the rest of the group took, once
    # every stage had ended (here a subshell of stage 2 that ignores
    # SIGTERM).
    run_fl pipe --timeout 0.5 --kill-after 0.3 sh -c 'kill -KILL $$' \
        ::: sh -c '(trap "" TERM; sleep 30) & exec sleep 100'
    expect_status 124
}

case_pipe_verbose() {
    run_fl pipe -v sh -c 'exit 3' ::: cat
    expect_status 3
    expect_err_has "forkless: stage 1 (sh): exit 3 after "
    expect_err_has "forkless: stage 2 (cat): exit 0 after "
    run_fl pipe -v yes ::: head -1
    expect_err_has "forkless: stage 1 (yes): signal PIPE after "
    expect_err_has "forkless: stage 2 (head): exit 0 after "
    run_fl pipe -v --timeout 0.2 sleep 100 ::: cat
    expect_status 124
    expect_err_has "forkless: stage 1 (sleep): signal TERM after "
    expect_err_has "(timed out)"
}

# pty_job SCRIPT FORKLESS ARGS...: runs forkless as the foreground job of a
# new session on a pty, python3's pty module its driver: a "shell" (the
# session leader) starts it in a process group of its own, gives it the
# terminal and waits for it, writing "<stopped>" when it stops (then
# continuing it in the foreground, as fg does) and "<exit N>" at its end.
# SCRIPT, python3 lines with the pty master as fd and expect(s), which
# waits for s from the terminal, types at it. $T/out gets what the
# terminal showed; STATUS is 0, or 1 on a hang.
pty_job() {
    command -v python3 >/dev/null || skip "no python3 for a pty driver"
    python3 -c 'import pty' 2>/dev/null || skip "python3 has no pty module"
    need_pty
    local script=$1
    shift
    python3 - "$@" >"$T/out" 2>"$T/err" <<EOF
import os, pty, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        os.tcsetpgrp(0, os.getpid())   # the terminal too, before the exec
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execv(sys.argv[1], sys.argv[1:])
    # As a shell does, from both sides; once the job has exec'd, ours is
    # refused (EACCES), and its own has done it.
    try:
        os.setpgid(job, job)
    except PermissionError:
        pass
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, job)
    while True:
        _, status = os.waitpid(job, os.WUNTRACED)
        os.tcsetpgrp(0, os.getpgrp())
        if os.WIFSTOPPED(status):
            os.write(1, b"<stopped>\n")
            os.tcsetpgrp(0, job)
            os.killpg(job, signal.SIGCONT)
            continue
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        os.write(1, b"<exit %d>\n" % code)
        os._exit(0)
seen = b""
def expect(s):
    global seen
    end = time.time() + 20
    while s.encode() not in seen:
        if time.time() > end:
            sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
            print("HANG waiting for %r" % s)
            os.kill(pid, signal.SIGKILL)
            sys.exit(1)
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
$script
expect("<exit")
expect("\n")
sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
EOF
    STATUS=$?
}

case_pipe_reads_its_terminal() {
    # A stage reading the terminal is in the foreground, not stopped by
    # SIGTTIN for ever: it gets the input and its EOF.
    pty_job 'os.write(fd, b"hello\n"); expect("HELLO"); os.write(fd, b"\x04")' \
        "$FL" pipe cat ::: tr a-z A-Z
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^HELLO$' "$T/out" || fail "no HELLO: $(out)"
    grep -q '^<exit 0>$' "$T/out" || fail "not exit 0: $(out)"
}

case_pipe_stops_with_its_stages() {
    # ^Z stops the stages, and forkless with them, so that the shell sees
    # the job stop; fg continues them all, on the terminal again.
    pty_job 'os.write(fd, b"one\n"); expect("ONE"); os.write(fd, b"\x1a"); expect("<stopped>")
os.write(fd, b"two\n"); expect("TWO"); os.write(fd, b"\x04")' \
        "$FL" pipe cat ::: tr a-z A-Z
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^TWO$' "$T/out" || fail "no TWO after fg: $(out)"
    grep -q '^<exit 0>$' "$T/out" || fail "not exit 0: $(out)"
}

case_run_timeout_stops_its_program_on_ctrl_z() {
    # With --timeout the program's group is not the terminal's foreground
    # one: forkless passes ^Z on, stops with it, and continues it on fg.
    pty_job 'expect("start"); os.write(fd, b"\x1a"); expect("<stopped>"); expect("continued")' \
        "$FL" run --timeout 60 -- sh -c 'trap "echo continued" CONT; echo start; sleep 1; echo end'
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^continued$' "$T/out" || fail "the program was not stopped and continued: $(out)"
    grep -q '^end$' "$T/out" || fail "no end: $(out)"
    grep -q '^<exit 0>$' "$T/out" || fail "not exit 0: $(out)"
}

case_run_timeout_passes_terminal_resizes_on() {
    # The terminal signals its foreground group, forkless's: SIGWINCH goes
    # on to the program's own group.
    pty_job 'expect("ready")
import fcntl, struct, termios
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
expect("winch")' \
        "$FL" run --timeout 60 -- sh -c 'trap "echo winch" WINCH; echo ready; sleep 1; echo end'
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^winch$' "$T/out" || fail "no SIGWINCH reached the program: $(out)"
    grep -q '^<exit 0>$' "$T/out" || fail "not exit 0: $(out)"
}

case_pipe_leaves_the_terminal_to_a_pager_in_its_job() {
    # forkless shares its job's group with a reader after it (as with
    # `forkless pipe a ::: b | less`): the stages, which do not read the
    # terminal, never take it, so the reader's read of /dev/tty is not
    # stopped by SIGTTIN, nor the job with it. The reader waits until the
    # stages have started.
    mkfifo "$T/fifo"
    pty_job 'expect("ready-to-read"); os.write(fd, b"typed\n"); expect("got typed"); expect("stage-done")' \
        "$(command -v sh)" -c '"$1" pipe sh -c "echo >\"\$1/started\"; read a <\"\$1/fifo\"; echo stage-done" sh "$2" ::: cat |
            { while [ ! -e "$2/started" ]; do sleep 0.05; done; sleep 0.3
              echo ready-to-read >/dev/tty; read line </dev/tty; echo "got $line" >/dev/tty
              echo go >"$2/fifo"; cat; }' sh "$FL" "$T"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^stage-done$' "$T/out" || fail "the stages did not finish: $(out)"
    # The driver continues a stopped job at once, as fg would; a shell
    # would have shown it stopped, waiting for the user.
    ! grep -q '^<stopped>$' "$T/out" || fail "the job stopped: $(out)"
    grep -q '^<exit 0>$' "$T/out" || fail "not exit 0: $(out)"
}

case_run_timeout_lends_the_terminal_to_a_program_that_reads_it() {
    # In a job's group with a shell around it, the program's group gets the
    # terminal once the program reads it (SIGTTIN), instead of staying
    # stopped until the timeout; the shell has it back after.
    pty_job 'os.write(fd, b"hello\n"); expect("HELLO"); os.write(fd, b"\x04"); expect("after")' \
        "$(command -v sh)" -c '"$1" run --timeout 60 -- tr a-z A-Z; echo "after $?"' sh "$FL"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^after 0$' "$T/out" || fail "forkless did not exit 0: $(out)"
}

case_ctrl_c_after_the_loan_reaches_the_script_around_forkless() {
    # Once a stage (or the program) has read the terminal, its group has
    # it, and a ^C goes to that group alone; the script around forkless,
    # in forkless's group, would have got it from a shell pipeline, and
    # a shell that waits acts on its child's INT only when it got one too:
    # forkless, ended by that INT, sends it to its own group.
    pty_job 'os.write(fd, b"hello\n"); expect("HELLO"); os.write(fd, b"\x03")' \
        "$(command -v sh)" -c 'for i in 1 2; do "$1" pipe cat ::: tr a-z A-Z; echo "iteration $i rc=$?"; done' \
        sh "$FL"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    ! grep -q 'iteration' "$T/out" || fail "the script went on after ^C: $(out)"
    grep -q '<exit 130>' "$T/out" || fail "the script did not end by SIGINT: $(out)"
    pty_job 'os.write(fd, b"hello\n"); expect("HELLO"); os.write(fd, b"\x03")' \
        "$(command -v sh)" -c '"$1" run --timeout 60 -- tr a-z A-Z; echo "after $?"' sh "$FL"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    ! grep -q '^after' "$T/out" || fail "the script went on after ^C: $(out)"
    grep -q '<exit 130>' "$T/out" || fail "the script did not end by SIGINT: $(out)"
    # An INT sent to forkless itself, not from the terminal, is passed on
    # and ends forkless, not the script, as around a shell's command.
    pty_job 'os.write(fd, b"hello\n"); expect("HELLO"); expect("\n")
os.kill(int(seen.split(b"forkless=")[1].split()[0]), signal.SIGINT)' \
        "$(command -v sh)" -c '"$1" pipe cat ::: sh -c "echo forkless=\$PPID; exec tr a-z A-Z"; echo "after $?"' \
        sh "$FL"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^after 130' "$T/out" || fail "the script did not go on after forkless's INT: $(out)"
}

case_run_timeout_lends_the_terminal_to_a_program_that_sets_its_modes() {
    # tcsetattr() from a background group is SIGTTOU: the program's group
    # gets the terminal then too.
    pty_job 'expect("after")' \
        "$(command -v sh)" -c '"$1" run --timeout 60 -- stty -echo; echo "after $?"' sh "$FL"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^after 0$' "$T/out" || fail "forkless did not exit 0: $(out)"
}

case_run_timeout_ctrl_z_after_the_loan_stops_the_whole_job() {
    # Once the program's group has the terminal, ^Z stops that group only;
    # forkless then stops its own group, the shell around it too, so that
    # the job is seen stopped, and fg continues everything.
    pty_job 'os.write(fd, b"abc\n"); expect("ABC"); os.write(fd, b"\x1a"); expect("<stopped>")
os.write(fd, b"def\n"); expect("DEF"); os.write(fd, b"\x04"); expect("after")' \
        "$(command -v sh)" -c '"$1" run --timeout 60 -- tr a-z A-Z; echo "after $?"' sh "$FL"
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^after 0$' "$T/out" || fail "forkless did not exit 0: $(out)"
}

# orphaned_reader ARGS...: forkless ARGS in a background process group
# whose leader has exited (orphaned: the kernel discards SIGTSTP there),
# its first child reading the terminal. That child is stopped by SIGTTIN
# and must stay so, not be continued again and again to be stopped once
# more (a busy loop): $T/out gets "state T, switches 0" when it does.
orphaned_reader() {
    command -v python3 >/dev/null || skip "no python3 for a pty driver"
    need_pty
    python3 - "$FL" "$T" "$@" >"$T/out" 2>"$T/err" <<'EOF'
import os, pty, signal, sys, time
FL, T, ARGS = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    leader = os.fork()
    if leader == 0:
        os.setpgid(0, 0)
        me = os.getpid()
        fl = os.fork()
        if fl == 0:
            # While the leader lives, the group is not orphaned: forkless
            # would stop for its SIGTSTP, and the leader's exit would then
            # send the group SIGHUP and SIGCONT in the middle of the test.
            while os.getppid() == me:
                time.sleep(0.001)
            os.execv(FL, [FL] + ARGS)
        open(T + "/flpid", "w").write(str(fl))
        os._exit(0)
    os.waitpid(leader, 0)
    time.sleep(60)
    os._exit(0)
def switches(p):
    return sum(int(l.split()[1]) for l in open("/proc/%d/status" % p) if "ctxt_switches:" in l)
def state(p):
    return open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[0]
end, cat, fl = time.time() + 20, None, None
while time.time() < end and cat is None:
    try:
        fl = int(open(T + "/flpid").read())
        kids = open("/proc/%d/task/%d/children" % (fl, fl)).read().split()
        if kids and state(int(kids[0])) == "T":
            cat = int(kids[0])
    except (OSError, ValueError):
        time.sleep(0.05)
if cat is None:
    print("the program was never seen stopped")
else:
    time.sleep(0.2)
    before = switches(cat)
    time.sleep(1)
    print("state %s, switches %d" % (state(cat), switches(cat) - before))
    os.kill(cat, signal.SIGKILL)
if fl:
    os.kill(fl, signal.SIGKILL)
os.kill(pid, signal.SIGKILL)
EOF
}

case_run_in_an_orphaned_background_group_leaves_a_reader_stopped() {
    orphaned_reader run --pgroup -- cat /dev/tty
    grep -q '^state T, switches 0$' "$T/out" || fail "the program did not stay stopped: $(out) $(err)"
}

case_pipe_in_an_orphaned_background_group_leaves_a_reader_stopped() {
    orphaned_reader pipe cat /dev/tty ::: cat
    grep -q '^state T, switches 0$' "$T/out" || fail "the stage did not stay stopped: $(out) $(err)"
}

case_pipe_alone_in_its_job_gives_its_stages_the_terminal() {
    # forkless alone in the shell's job: the stages' group is the
    # terminal's foreground group from the start, so that a process a stage
    # starts (here tr under sh) can read it, even where no stage is stopped
    # for that read (each sh catches SIGTTIN), which forkless would not see.
    pty_job 'os.write(fd, b"hello\n"); os.write(fd, b"\x04"); expect("HELLO"); expect("done")' \
        "$FL" pipe sh -c 'trap : TTIN; tr a-z A-Z; echo done' ::: sh -c 'trap : TTIN; cat'
    [ "$STATUS" -eq 0 ] || fail "the pty driver failed: $(out) $(err)"
    grep -q '^<exit 0>$' "$T/out" || fail "not exit 0: $(out)"
}

case_pipe_time_each_stage() {
    # --time: one line of figures a stage, as run's --time gives.
    run_fl pipe --time true ::: true
    expect_status 0
    expect_err_has "forkless: stage 1 (true): elapsed "
    expect_err_has "forkless: stage 2 (true): elapsed "
}

case_pipe_time_is_not_timeout() {
    # "--time 5" is --time and a program "5", not --timeout abbreviated.
    run_fl pipe --time 5 ::: true
    expect_status 127
    expect_err_has 'stage 1: exec "5"'
}

case_an_empty_stdio_path_is_no_file() {
    # As a shell's < "" and > "": ENOENT, never the current directory.
    local opt
    for opt in --stdin --stdout --stderr; do
        run_fl run "$opt" "" -- true
        expect_status 125
        expect_err_has 'open "": No such file or directory'
    done
}

case_pipe_empty_program() {
    # Said as run says it, with the stage's number.
    run_fl pipe '' ::: true
    expect_status 127
    expect_err_has 'forkless: pipe: stage 1: exec "": No such file or directory (the program name is empty)'
}

case_pipe_passes_sigterm_on() {
    # forkless passes the SIGTERM it gets on to every stage; the status
    # is then the stages', here the rightmost that did not exit 0.
    "$FL" pipe sh -c 'trap "echo one >\"$1\"; exit 7" TERM; echo $$ >"$2"; while :; do sleep 0.05; done' \
        sh "$T/flag1" "$T/pid1" \
        ::: sh -c 'trap "echo two >\"$1\"; exit 0" TERM; echo $$ >"$2"; while :; do sleep 0.05; done' \
        sh "$T/flag2" "$T/pid2" >"$T/out" 2>"$T/err" &
    local fl_pid=$!
    BACKGROUND_PIDS+=("$fl_pid")
    wait_for file_has_pid "$T/pid1"
    wait_for file_has_pid "$T/pid2"
    BACKGROUND_PIDS+=("$(cat "$T/pid1")" "$(cat "$T/pid2")")
    kill -TERM "$fl_pid"
    wait "$fl_pid"
    STATUS=$?
    expect_status 7
    expect_file "$T/flag1" one
    expect_file "$T/flag2" two
}

# ------------------------------------------------- containment, placement

# NS: the options that let this user make namespaces: none as root, else a
# user namespace of its own with a map (unshare -r).
if [ "$(id -u)" -eq 0 ]; then NS=(); else NS=(--map-root-user); fi

# need_ns LIST: skips unless forkless can make the namespaces of LIST
# here (with "${NS[@]}"): a user namespace may be forbidden, a kernel may
# lack one.
need_ns() {
    "$FL" run "${NS[@]}" --unshare "$1" -- true >"$T/probe" 2>&1 ||
        skip "cannot make namespaces $1 here: $(cat "$T/probe")"
}
need_userns() {
    "$FL" run --unshare user -- true >"$T/probe" 2>&1 ||
        skip "cannot make a user namespace here: $(cat "$T/probe")"
}
# need_landlock: skips unless Landlock restricts every right here.
need_landlock() {
    "$FL" run --landlock-rx / -- true >"$T/probe" 2>&1 ||
        skip "no full Landlock here: $(cat "$T/probe")"
}

case_contain_userns_pid_proc() {
    need_userns
    run_fl run --unshare user,pid,mount --map-root-user --mount-proc -- \
        sh -c 'id -u; echo $$; ls /proc | grep -c "^[0-9][0-9]*$"'
    expect_status 0
    expect_err_empty
    [ "$(sed -n 1p "$T/out")" = 0 ] || fail "uid inside is not 0: $(out)"
    [ "$(sed -n 2p "$T/out")" = 1 ] || fail "the program is not pid 1: $(out)"
    # sh, ls and grep, give or take: not the host's processes.
    [ "$(sed -n 3p "$T/out")" -le 5 ] || fail "/proc shows the host's pids: $(out)"
}

case_contain_mount_proc_implies_mount_and_pid() {
    need_ns mount,pid
    run_fl run "${NS[@]}" --mount-proc -- sh -c 'echo $$; readlink /proc/self/ns/mnt'
    expect_status 0
    [ "$(sed -n 1p "$T/out")" = 1 ] || fail "the program is not pid 1: $(out)"
    [ "$(sed -n 2p "$T/out")" != "$(readlink /proc/self/ns/mnt)" ] ||
        fail "the program shares our mount namespace: $(out)"
    # Our own /proc is still ours.
    [ -e "/proc/$$" ] || fail "our /proc changed"
}

case_contain_map_current_user() {
    need_userns
    run_fl run --map-current-user -- sh -c 'id -u; id -g; readlink /proc/self/ns/user'
    expect_status 0
    [ "$(sed -n 1p "$T/out")" = "$(id -u)" ] || fail "uid inside: $(out)"
    [ "$(sed -n 2p "$T/out")" = "$(id -g)" ] || fail "gid inside: $(out)"
    [ "$(sed -n 3p "$T/out")" != "$(readlink /proc/self/ns/user)" ] ||
        fail "--map-current-user made no user namespace: $(out)"
}

# In a new user namespace --user names ids inside it: always set (the
# comparison with our ids outside cannot judge them), and one that the
# map lacks is refused, saying so.
case_contain_user_inside_the_namespace() {
    need_userns
    run_fl run --map-root-user --user 0:0 -- id -u
    expect_status 0
    [ "$(cat "$T/out")" = 0 ] || fail "uid inside: $(out)"
    run_fl run --map-current-user --user "$(id -u):$(id -g)" -- id -u
    expect_status 0
    [ "$(cat "$T/out")" = "$(id -u)" ] || fail "uid inside with --map-current-user: $(out)"
    run_fl run --map-root-user --user 65534:65534 -- id -u
    expect_status 125
    expect_err_has "only the ids of its map exist"
}

# As uid 65534, --user nobody is our own user outside, yet not the root
# that --map-root-user makes us inside: it must not be skipped as no change.
case_contain_user_inside_the_namespace_unprivileged() {
    nobody_forkless
    as_nobody "$NOBODY_FL" run --unshare user -- true >"$T/probe" 2>&1 ||
        skip "uid 65534 cannot make a user namespace here: $(cat "$T/probe")"
    run_nobody run --map-root-user --user 65534:65534 -- id -u
    expect_status 125
    expect_err_has "only the ids of its map exist"
    run_nobody run --map-root-user --user 0:0 -- id -u
    expect_status 0
    expect_out 0
}

case_contain_hostname() {
    need_ns uts
    local ours
    ours=$(uname -n)
    run_fl run "${NS[@]}" --hostname forkless-box -- uname -n
    expect_status 0
    expect_out forkless-box
    [ "$(uname -n)" = "$ours" ] || fail "our host name changed to $(uname -n)"
    run_fl run "${NS[@]}" --hostname "$(printf 'x%.0s' {1..65})" -- true
    expect_status 125
    expect_err_has "forkless: hostname \"xxx"
}

case_contain_hostname_empty_is_refused() {
    expect_bad_option run --unshare uts --hostname '' -- true
    expect_err_has "--hostname: the name is empty"
}

case_contain_net() {
    need_ns net
    run_fl run "${NS[@]}" --unshare net -- cat /proc/net/dev
    expect_status 0
    local ifaces
    ifaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' "$T/out")
    [ "$ifaces" = lo ] || fail "interfaces in a new net namespace: $ifaces"
}

case_contain_ipc_uts_cgroup_time() {
    local ns
    for ns in ipc uts cgroup time; do
        [ -e "/proc/self/ns/$ns" ] || continue
        need_ns "$ns"
        run_fl run "${NS[@]}" --unshare "$ns" -- readlink "/proc/self/ns/$ns"
        expect_status 0
        [ "$(out)" != "$(readlink "/proc/self/ns/$ns")" ] || fail "--unshare $ns: the same $(out)"
    done
}

case_contain_unshare_bad() {
    expect_bad_option run --unshare frob -- true
    expect_err_has '--unshare: unknown namespace "frob"'
    expect_bad_option run --unshare user,,pid -- true
    expect_bad_option run --unshare '' -- true
    expect_bad_option run --map-root-user --map-current-user -- true
    expect_bad_option run --chroot '' -- true
}

case_contain_unshare_needs_privilege() {
    nobody_forkless
    run_nobody run --unshare net -- true
    expect_status 125
    expect_err_has "--unshare: new namespaces need CAP_SYS_ADMIN"
}

case_contain_unshare_time_needs_privilege() {
    # clone3() refuses it at step clone; the fork backend's child, at its
    # unshare(): each says what would give the privilege.
    [ -e /proc/self/ns/time ] || skip "no time namespace in this kernel"
    nobody_forkless
    run_nobody run --unshare time -- true
    expect_status 125
    expect_err_has "--unshare: new namespaces need CAP_SYS_ADMIN"
    run_nobody run --backend fork --unshare time -- true
    expect_status 125
    expect_err_has "unshare: Operation not permitted (the time namespace) (--unshare time: a new namespace needs CAP_SYS_ADMIN"
}

case_contain_unprivileged_userns() {
    # What unshare -rpf --mount-proc does, without privilege, in one exec.
    nobody_forkless
    run_nobody run --unshare user -- true
    [ "$STATUS" -eq 0 ] || skip "uid 65534 cannot make a user namespace here: $(err)"
    run_nobody run --unshare user,mount,pid --map-root-user --mount-proc -- \
        sh -c 'id -u; echo $$; ls /proc | grep -c "^[0-9][0-9]*$"'
    expect_status 0
    expect_err_empty
    [ "$(sed -n 1p "$T/out")" = 0 ] || fail "uid inside is not 0: $(out)"
    [ "$(sed -n 2p "$T/out")" = 1 ] || fail "the program is not pid 1: $(out)"
    [ "$(sed -n 3p "$T/out")" -le 5 ] || fail "/proc shows the host's pids: $(out)"
}

case_contain_chroot_argument_list_too_long_is_127_without_the_program() {
    # Under --chroot the program is looked for inside the new root.
    need_ns mount
    mkdir -p "$T/empty"
    local a
    a=$(head -c 100000 /dev/zero | tr '\0' x)
    run_fl run "${NS[@]}" --rlimit STACK=131072 --chroot "$T/empty" -- /bin/true "$a" "$a"
    expect_status 127
}

case_contain_chroot_program_missing_inside_is_127() {
    # Not found where the child looked, inside the new root, whatever the
    # caller's own /bin holds: 127, as chroot(1) exits.
    need_ns mount
    mkdir -p "$T/empty"
    run_fl run "${NS[@]}" --chroot "$T/empty" -- /bin/true
    expect_status 127
    expect_err_has 'exec "/bin/true": No such file or directory'
}

case_contain_chroot_program_missing_behind_an_absolute_symlink_is_127() {
    # The root's /bin is a link to /usr/bin, absolute as in a merged-/usr
    # system: inside the root it names the root's own /usr/bin, which
    # lacks the program, whatever the caller's /usr/bin holds. 127, as
    # chroot(1) exits; so for a link that dangles inside the root.
    need_ns mount
    mkdir -p "$T/merged/usr/bin"
    ln -s /usr/bin "$T/merged/bin"
    ln -s /usr/bin/true "$T/merged/usr/bin/mytrue"
    run_fl run "${NS[@]}" --chroot "$T/merged" -- /bin/true
    expect_status 127
    expect_err_has 'exec "/bin/true": No such file or directory'
    run_fl run "${NS[@]}" --chroot "$T/merged" --chdir /bin -- ./true
    expect_status 127
    run_fl run "${NS[@]}" --chroot "$T/merged" -- /usr/bin/mytrue
    expect_status 127
    # ".." stops at the new root, as it did for the exec.
    run_fl run "${NS[@]}" --chroot "$T/merged" -- /../../../../usr/bin/true
    expect_status 127
    run_fl run "${NS[@]}" --chroot "$T/merged" --chdir ../../../.. -- ./usr/bin/true
    expect_status 127
    # The chdir() and the exec each follow up to 40 links: 30 then 15 is
    # a file that is there (126: its dynamic loader is not), not ELOOP.
    local i prev=/usr/bin
    cp /bin/true "$T/merged/usr/bin/prog"
    for i in $(seq 30); do ln -s "$prev" "$T/merged/d$i"; prev=/d$i; done
    ln -s prog "$T/merged/usr/bin/l1"
    for i in $(seq 2 15); do ln -s "l$((i - 1))" "$T/merged/usr/bin/l$i"; done
    run_fl run "${NS[@]}" --chroot "$T/merged" --chdir /d30 -- ./l15
    expect_status 126
}

case_contain_chroot_relative_root_keeps_the_explanation() {
    # A root named from the current directory: the program inside it is
    # there, its dynamic loader is not, and the message says so.
    need_ns mount
    mkdir -p "$T/rel"
    cp /bin/true "$T/rel/prog"
    head -c 4096 /bin/true | grep -aqE '/[[:alnum:]_./-]*/ld[-.]' ||
        skip "/bin/true names no dynamic loader in its first 4 KiB"
    # A current directory with no name any more: the root as given, as
    # chroot(1) takes it, not a refusal.
    mkdir "$T/gone"
    STATUS=0
    (cd "$T/gone" && rmdir "$T/gone" &&
        "$FL" run "${NS[@]}" --chroot . -- /bin/true >"$T/out" 2>"$T/err") || STATUS=$?
    expect_status 127
    # What the same root named absolutely gets said.
    run_fl run "${NS[@]}" --chroot "$T/rel" -- /prog
    grep -qF '(dynamic loader' "$T/err" ||
        skip "no explanation inside a new root here (openat2 RESOLVE_IN_ROOT, Linux 5.6): $(err)"
    STATUS=0
    (cd "$T" && "$FL" run "${NS[@]}" --chroot rel -- /prog >"$T/out" 2>"$T/err") || STATUS=$?
    expect_status 126
    expect_err_has 'exec "/prog": No such file or directory (dynamic loader'
}

case_contain_chroot_shell_fallback_without_bin_sh_names_the_shell() {
    # The file is there; the shell that runs it is not (a distroless root).
    need_ns mount
    mkdir -p "$T/noshell"
    printf 'echo hi\n' >"$T/noshell/script"
    chmod 755 "$T/noshell/script"
    run_fl run "${NS[@]}" --chroot "$T/noshell" --shell-fallback -- /script
    expect_status 126
    expect_err_has 'exec "/script": No such file or directory (the shell that --shell-fallback runs it with, "/bin/sh": not found)'
    # A /bin/sh that is no program at all: the shell's ENOEXEC, said with
    # the option's name.
    mkdir -p "$T/noshell/bin"
    printf 'garbage\001' >"$T/noshell/bin/sh"
    chmod 755 "$T/noshell/bin/sh"
    run_fl run "${NS[@]}" --chroot "$T/noshell" --shell-fallback -- /script
    expect_status 126
    expect_err_has 'Exec format error (the shell that --shell-fallback runs it with, "/bin/sh")'
    ! grep -q FL_ "$T/err" || fail "the library's flag name: $(err)"
}

case_contain_chroot_relative_file_is_refused() {
    # Made absolute from the current directory, outside the new root, the
    # name would mean nothing inside it.
    cd "$T" || fail "cd $T"
    expect_bad_option run --chroot / --stdout out.txt -- /bin/true
    expect_err_has "--stdout out.txt: with --chroot, name the file from the new root"
    [ ! -e "$T/out.txt" ] || fail "out.txt was made"
}

case_contain_chroot() {
    command -v cc >/dev/null || skip "no C compiler to build a static program for the new root"
    need_ns mount
    mkdir -p "$T/root/sub"
    echo inside >"$T/root/marker"
    cat >"$T/prog.c" <<'C'
#include <stdio.h>
#include <unistd.h>
int main(void)
{
    char line[64] = "", cwd[256] = "?";
    FILE *f = fopen("/marker", "r");
    if (!f || !fgets(line, sizeof line, f))
        return 3;
    printf("%s%s\n", line, getcwd(cwd, sizeof cwd) ? cwd : "?");
    return 0;
}
C
    cc -static -o "$T/root/prog" "$T/prog.c" 2>"$T/cc.err" ||
        skip "cannot link a static program: $(head -3 "$T/cc.err")"
    # chroot(2) needs CAP_SYS_CHROOT: as root, or root of a user namespace.
    run_fl run "${NS[@]}" --chroot "$T/root" -- /prog
    expect_status 0
    expect_out "$(printf 'inside\n/')"
    run_fl run "${NS[@]}" --chroot "$T/root" -C /sub -- /prog
    expect_status 0
    expect_out "$(printf 'inside\n/sub')"
    run_fl run "${NS[@]}" --chroot "$T/no-such-root" -- /prog
    expect_status 125
    expect_err_has "forkless: chroot \"$T/no-such-root\": No such file or directory"
}

case_contain_no_new_privs() {
    run_fl run -- grep NoNewPrivs /proc/self/status
    grep -q '1$' "$T/out" && skip "forkless runs under no_new_privs already"
    run_fl run --no-new-privs -- grep NoNewPrivs /proc/self/status
    expect_status 0
    expect_out "$(printf 'NoNewPrivs:\t1')"
}

case_contain_caps() {
    need_root_and_nobody
    # Bounding set and ambient capabilities across the change to nobody,
    # as setpriv --bounding-set --ambient-caps --reuid would.
    run_fl run --user nobody --caps net_bind_service,CAP_NET_RAW --ambient-caps cap_net_bind_service \
        -- grep -E '^Cap(Amb|Bnd)' /proc/self/status
    expect_status 0
    expect_out "$(printf 'CapBnd:\t0000000000002400\nCapAmb:\t0000000000000400')"
    run_fl run --caps '' -- grep CapBnd /proc/self/status
    expect_status 0
    expect_out "$(printf 'CapBnd:\t0000000000000000')"
    run_fl run --caps 10,Net_Admin -- grep CapBnd /proc/self/status
    expect_status 0
    expect_out "$(printf 'CapBnd:\t0000000000001400')"
}

case_contain_caps_bad() {
    expect_bad_option run --caps net_bind_service,frob -- true
    expect_err_has '--caps: unknown capability "frob"'
    expect_bad_option run --ambient-caps cap_nope -- true
    expect_err_has '--ambient-caps: unknown capability "cap_nope"'
    expect_bad_option run --caps 64 -- true
    # One past this kernel's last would leave nothing kept, without a word.
    local last
    last=$(cat /proc/sys/kernel/cap_last_cap 2>/dev/null) || last=
    if [ -n "$last" ] && [ "$last" -lt 63 ]; then
        expect_bad_option run --caps $((last + 1)) -- true
        expect_err_has "--caps: capability $((last + 1)) is not one of this kernel's (0 to $last)"
        expect_bad_option run --ambient-caps $((last + 1)) -- true
    fi
    expect_bad_option run --caps net_raw, -- true
    expect_bad_option run --caps net_raw --ambient-caps net_bind_service -- true
    expect_err_has "cap_net_bind_service is not in the bounding set that --caps keeps"
}

case_contain_caps_need_privilege() {
    nobody_forkless
    run_nobody run --caps '' -- true
    expect_status 125
    expect_err_has "forkless: bounding cap_chown: Operation not permitted"
    expect_err_has "needs CAP_SETPCAP"
    # Nothing to take away (every capability forkless's bounding set
    # has): nothing to drop, no privilege needed.
    run_nobody run -- grep CapBnd /proc/self/status
    expect_status 0
    local bnd
    bnd=$(awk '{print $2}' "$T/out")
    run_nobody run --caps "$(caps_of_mask "$bnd")" -- grep CapBnd /proc/self/status
    expect_status 0
    expect_out "$(printf 'CapBnd:\t%s' "$bnd")"
    # An ambient capability the caller cannot raise: named with its value.
    run_nobody run --ambient-caps net_bind_service -- true
    expect_status 125
    expect_err_has "(--ambient-caps net_bind_service: an ambient capability must be forkless's to give"
}

case_exec_eacces_says_why_no_one_may_run_it() {
    mkdir "$T/dir" && printf '#!/bin/sh\n' >"$T/plain" && chmod 644 "$T/plain"
    run_fl run -- "$T/dir"
    expect_status 126
    expect_err_has "Permission denied (a directory)"
    run_fl run -- "$T/plain"
    expect_err_has "Permission denied (no execute permission: mode 0644)"
    # A file with execute bits on a noexec mount.
    need_ns mount
    mkdir "$T/mnt"
    run_fl run "${NS[@]}" --unshare mount -- sh -c \
        'mount -t tmpfs -o noexec none "$1" && cp /bin/true "$1/t" && exec "$2" run "$1/t"' \
        sh "$T/mnt" "$FL"
    grep -q "mount" "$T/err" && ! grep -q "^forkless: exec" "$T/err" && skip "cannot mount a tmpfs here: $(err)"
    expect_status 126
    expect_err_has "Permission denied (on a filesystem mounted noexec)"
}

case_contain_errors_name_the_option() {
    # A step's error names the option that asked for it, and, where
    # privilege is wanting, what would do.
    run_fl run --chroot /nonexistent-root -- true
    expect_status 125
    expect_err_has '(--chroot)'
    run_fl run -C /nonexistent-dir -- true
    expect_err_has '(--chdir /nonexistent-dir)'
    run_fl run -C '' -- true
    expect_err_has "(--chdir '')"
    run_fl run --stdin '' -- true
    expect_err_has "(--stdin '')"
    run_fl run --cgroup relative-cgroup -- true
    expect_err_has '(--cgroup relative-cgroup)'
}

case_contain_errors_without_privilege_name_what_asked() {
    nobody_forkless
    run_nobody run --chroot / -- true
    expect_status 125
    expect_err_has '(--chroot: changing the root needs CAP_SYS_CHROOT'
    # The namespace came from --hostname, not from an --unshare never typed.
    run_nobody run --hostname box -- true
    [ "$STATUS" -eq 125 ] || skip "this system lets uid 65534 make a UTS namespace"
    expect_err_has '(--hostname: new namespaces need CAP_SYS_ADMIN'
}

# caps_of_mask HEX: the capability numbers of a CapBnd mask, comma
# separated, as --caps takes them.
caps_of_mask() {
    local mask=$((16#$1)) n list=
    for n in $(seq 0 63); do
        [ $(((mask >> n) & 1)) -eq 1 ] && list="$list${list:+,}$n"
    done
    printf '%s' "$list"
}

# need_seccomp: skips unless forkless can install a seccomp filter here: a
# kernel without CONFIG_SECCOMP_FILTER, or a container's filter that denies
# seccomp() or prctl(), refuses it at step seccomp, or at the no_new_privs
# it implies (any other failure is forkless's own: the case goes on, and
# fails).
need_seccomp() {
    "$FL" run --seccomp-deny mkdirat -- true >"$T/probe" 2>&1 && return
    grep -Eq '^forkless: (seccomp|no_new_privs): ' "$T/probe" &&
        skip "cannot install a seccomp filter here: $(cat "$T/probe")"
}

# deny_mkdir: the system calls that make a directory here (mkdir is not
# on every architecture).
deny_mkdir() {
    if "$FL" run --seccomp-deny mkdir -- true 2>/dev/null; then echo mkdir,mkdirat; else echo mkdirat; fi
}

case_contain_seccomp() {
    need_seccomp
    local calls
    calls=$(deny_mkdir)
    run_fl run --seccomp-deny "$calls" -- mkdir "$T/d"
    [ "$STATUS" -ne 0 ] || fail "mkdir ran under --seccomp-deny $calls"
    expect_err_has "Operation not permitted"
    [ ! -e "$T/d" ] || fail "$T/d was made"
    run_fl run --seccomp-deny "${calls%%,*}" --seccomp-deny mkdirat --seccomp-errno EACCES -- mkdir "$T/d"
    [ "$STATUS" -ne 0 ] || fail "mkdir ran under --seccomp-deny"
    expect_err_has "Permission denied"
    run_fl run --seccomp-deny "$calls" --seccomp-errno 38 -- mkdir "$T/d"
    expect_err_has "Function not implemented"
    # Any errno name, in any case, aliases too: not only the common ones.
    run_fl run --seccomp-deny "$calls" --seccomp-errno esrch -- mkdir "$T/d"
    expect_err_has "No such process"
    run_fl run --seccomp-deny "$calls" --seccomp-errno EWOULDBLOCK -- mkdir "$T/d"
    expect_err_has "Resource temporarily unavailable"
    run_fl run --seccomp-deny "$calls" --seccomp-errno ENOTEMPTY -- mkdir "$T/d"
    expect_err_has "Directory not empty"
    # Other calls run, and the filter implies no_new_privs.
    run_fl run --seccomp-deny "$calls" -- grep NoNewPrivs /proc/self/status
    expect_status 0
    expect_out "$(printf 'NoNewPrivs:\t1')"
}

case_contain_seccomp_bad() {
    run_fl run --seccomp-deny mkdirat,frobnicate -- true
    expect_status 125
    [ "$(err)" = 'forkless: --seccomp-deny: unknown system call "frobnicate" (this build knows the names of its kernel headers; give a newer call by its number)' ] || fail "stderr: $(err)"
    expect_bad_option run --seccomp-deny '' -- true
    expect_bad_option run --seccomp-deny mkdirat, -- true
    expect_bad_option run --seccomp-deny -1 -- true
    expect_err_has '"-1" is not a system call number (0 to 4095)'
    # No architecture numbers a call near 4096: a larger number is a typo
    # that would deny nothing.
    expect_bad_option run --seccomp-deny 99999 -- true
    expect_err_has '"99999" is not a system call number (0 to 4095)'
    # A sign makes it a number, as for --seccomp-errno and --nice.
    expect_bad_option run --seccomp-deny +99999 -- true
    expect_err_has '"+99999" is not a system call number (0 to 4095)'
    expect_bad_option run --seccomp-deny mkdirat,4096 -- true
    # The filter precedes the program's own exec.
    expect_bad_option run --seccomp-deny mkdirat,execve -- true
    expect_err_has '"execve" cannot be denied: the filter comes before the exec of the program'
    expect_bad_option run --seccomp-deny mkdirat --seccomp-errno EWHAT -- true
    expect_bad_option run --seccomp-deny mkdirat --seccomp-errno 0 -- true
    expect_bad_option run --seccomp-deny mkdirat --seccomp-errno 4096 -- true
    expect_bad_option run --seccomp-errno EPERM -- true
    expect_err_has "--seccomp-errno needs --seccomp-deny"
}

case_contain_landlock_exec_refused_says_landlock() {
    # The file may be run by its mode; the rules refuse it. The message
    # says which, rather than leave the mode to be suspected.
    need_landlock
    run_fl run --landlock-ro /etc -- true
    expect_status 126
    expect_err_has 'Permission denied (Landlock: a program, and the #! interpreter or dynamic loader that runs it, must be beneath a --landlock-rx path, and allowed by any Landlock rules forkless itself runs under)'
    # A cause of its own (no x bit) is said instead.
    cp /bin/true "$T/noexec"
    chmod 644 "$T/noexec"
    run_fl run --landlock-rx / -- "$T/noexec"
    expect_status 126
    expect_err_has '(no execute permission: mode 0644)'
    grep -qF Landlock "$T/err" && fail "a mode without x blamed on Landlock: $(err)"
    # Named from --chdir: the same refusal, the same words.
    cp /bin/true "$T/runnable"
    run_fl run --landlock-ro /etc --chdir "$T" -- ./runnable
    expect_status 126
    expect_err_has '(Landlock: a program'
    # A file the new user may not reach says EACCES without a cause found:
    # not Landlock's, whose rules allow everything here.
    if [ "$(id -u)" -eq 0 ] && [ "$(id -u nobody 2>/dev/null)" = 65534 ]; then
        mkdir -m 700 "$T/locked"
        cp /bin/true "$T/locked/true"
        run_fl run --user nobody --landlock-rx / -- "$T/locked/true"
        expect_status 126
        grep -qF Landlock "$T/err" && fail "another user's refusal blamed on Landlock: $(err)"
    fi
}

case_contain_landlock_empty_path() {
    local o
    for o in --landlock-ro --landlock-rx --landlock-rw; do
        expect_bad_option run "$o" '' -- true
        expect_err_has "$o: the path is empty"
    done
}

case_contain_landlock() {
    need_landlock
    mkdir "$T/in" "$T/ro"
    echo kept >"$T/ro/file"
    run_fl run --landlock-rx / --landlock-rw "$T/in" -- \
        sh -c 'echo a >"$1/in/f" && echo inside; echo b >"$1/outside" || echo outside refused' sh "$T"
    expect_status 0
    expect_out "$(printf 'inside\noutside refused')"
    expect_file "$T/in/f" a
    [ ! -e "$T/outside" ] || fail "wrote outside the --landlock-rw directory"
    # Read but not write beneath --landlock-ro; the system's programs
    # and libraries with --landlock-rx.
    local dir system=()
    for dir in /usr /bin /sbin /lib /lib32 /lib64 /etc; do
        [ -e "$dir" ] && system+=(--landlock-rx "$dir")
    done
    run_fl run "${system[@]}" --landlock-ro "$T/ro" -- \
        sh -c 'cat "$1/file"; echo x >>"$1/file" || echo refused' sh "$T/ro"
    expect_status 0
    expect_out "$(printf 'kept\nrefused')"
    expect_file "$T/ro/file" kept
    run_fl run --landlock-ro / -- /bin/sh -c true
    expect_status 126
    expect_err_has "Permission denied"
    # The filter implies no_new_privs.
    run_fl run --landlock-rx / -- grep NoNewPrivs /proc/self/status
    expect_status 0
    expect_out "$(printf 'NoNewPrivs:\t1')"
}

case_contain_landlock_missing_path() {
    need_landlock
    [ ! -e /nope ] || skip "/nope exists here"
    run_fl run --landlock-rx / --landlock-ro /nope -- true
    expect_status 125
    [ "$(err)" = 'forkless: landlock "/nope": No such file or directory (--landlock-ro /nope)' ] || fail "stderr: $(err)"
    [ ! -s "$T/out" ] || fail "ran something: $(out)"
}

case_contain_cpus() {
    grep -q '^Cpus_allowed_list:[[:space:]]*0\([-,]\|$\)' /proc/self/status ||
        skip "CPU 0 is not ours to run on"
    run_fl run --cpus 0 -- grep Cpus_allowed_list /proc/self/status
    expect_status 0
    expect_out "$(printf 'Cpus_allowed_list:\t0')"
    run_fl run --cpus 0-0:3,0 -- grep Cpus_allowed_list /proc/self/status
    expect_status 0
    expect_out "$(printf 'Cpus_allowed_list:\t0')"
    # A CPU beyond this machine's is refused by the kernel, named.
    run_fl run --cpus 8191 -- true
    expect_status 125
    expect_err_has "forkless: affinity 8191: Invalid argument"
}

case_contain_nice() {
    [ "$(nice)" -le 5 ] || skip "we run at nice $(nice): 5 would be lower"
    run_fl run --nice 5 -- cat /proc/self/stat
    expect_status 0
    [ "$(stat_field 19)" = 5 ] || fail "nice is $(stat_field 19): $(out)"
    run_fl run --nice +6 -- cat /proc/self/stat
    [ "$(stat_field 19)" = 6 ] || fail "nice is $(stat_field 19): $(out)"
}

case_contain_ionice() {
    command -v ionice >/dev/null || skip "no ionice to read the I/O class"
    run_fl run --ionice idle -- ionice
    expect_status 0
    expect_out idle
    run_fl run --ionice best-effort:2 -- ionice
    expect_status 0
    expect_out "best-effort: prio 2"
    run_fl run --ionice 2 -- ionice
    expect_status 0
    expect_out "best-effort: prio 4"
}

case_contain_oom_score_adj() {
    [ "$(cat /proc/self/oom_score_adj)" -le 100 ] || skip "our oom_score_adj is above 100"
    run_fl run --oom-score-adj 100 -- cat /proc/self/oom_score_adj
    expect_status 0
    expect_out 100
}

case_contain_placement_bad() {
    local v
    for v in 20 -21 abc '' 1.5 ' 1' 0x1; do expect_bad_option run --nice "$v" -- true; done
    expect_err_has "--nice: expected a nice value from -20 to 19"
    for v in none 0 4 idle:1 best-effort:8 realtime: realtime:x foo Idle; do
        expect_bad_option run --ionice "$v" -- true
    done
    expect_err_has "--ionice: expected CLASS[:LEVEL]"
    for v in 1001 -1001 x ''; do expect_bad_option run --oom-score-adj "$v" -- true; done
    expect_err_has "--oom-score-adj: expected a number from -1000 to 1000"
    for v in '' a 3-1 0-3:0 -1 0, ,0 0:2 1-; do expect_bad_option run --cpus "$v" -- true; done
    expect_err_has "--cpus: invalid CPU list"
    expect_bad_option run --cpus 0,,1 -- true
    expect_err_has '--cpus: invalid CPU list "0,,1": an item is empty'
    expect_bad_option run --cpus 9000 -- true
    expect_err_has "--cpus: CPU 9000 is beyond"
    expect_bad_option run --best-effort -- true
    expect_err_has "--best-effort applies to"
}

case_contain_placement_needs_privilege() {
    nobody_forkless
    run_nobody run --rlimit NICE=0 --nice -5 -- true
    expect_status 125
    expect_err_has "forkless: nice -5: Permission denied (a lower nice value needs CAP_SYS_NICE)"
    run_nobody run --oom-score-adj -5 -- true
    expect_status 125
    expect_err_has "forkless: oom_score_adj -5: "
}

# The kernel asks for CAP_SYS_NICE and CAP_SYS_RESOURCE in the initial
# user namespace: root of an enclosing or a new one is told so.
case_contain_placement_hint_names_the_initial_user_namespace() {
    need_userns
    command -v unshare >/dev/null || skip "no unshare(1) to enter a user namespace"
    unshare -Ur true 2>/dev/null || skip "unshare -Ur cannot make a user namespace here"
    unshare -Ur "$FL" run --rlimit NICE=0 --nice -5 -- true >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 125
    expect_err_has "(a lower nice value needs CAP_SYS_NICE in the initial user namespace)"
    unshare -Ur "$FL" run --rlimit NOFILE=64:64 -- "$FL" run --rlimit NOFILE=128 -- true \
        >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 125
    expect_err_has "raising a hard limit needs privilege, CAP_SYS_RESOURCE in the initial user namespace)"
    # One whose map is not written yet is not the initial one either.
    unshare -U "$FL" run --rlimit NICE=0 --nice -5 -- true >"$T/out" 2>"$T/err"
    STATUS=$?
    expect_status 125
    expect_err_has "(a lower nice value needs CAP_SYS_NICE in the initial user namespace)"
    run_fl run --unshare user --rlimit NICE=0 --nice -5 -- true
    expect_status 125
    expect_err_has "(a lower nice value needs CAP_SYS_NICE outside the new user namespace)"
}

case_contain_best_effort() {
    # No machine has CPU 8191 but the largest: the setting cannot apply.
    run_fl run --cpus 8191 --best-effort -- true
    expect_status 0
    [ "$(err)" = "forkless: cpus 8191 not applied (best effort)" ] || fail "stderr: $(err)"
    # In a new user namespace a lower nice value fails even for root; with
    # RLIMIT_NICE at 0 nothing else allows it.
    need_userns
    run_fl run --unshare user --rlimit NICE=0 --nice -5 -- true
    expect_status 125
    expect_err_has "forkless: nice -5: Permission denied"
    run_fl run --unshare user --rlimit NICE=0 --nice -5 --oom-score-adj 7 --best-effort -- \
        cat /proc/self/oom_score_adj
    expect_status 0
    expect_out 7
    [ "$(err)" = "forkless: nice -5 not applied (best effort)" ] || fail "stderr: $(err)"
}

case_contain_help() {
    run_fl run --help
    expect_status 0
    local said
    for said in --unshare --map-root-user --map-current-user --hostname --mount-proc --chroot \
                --no-new-privs --caps --ambient-caps --seccomp-deny --seccomp-errno \
                --landlock-ro --landlock-rx --landlock-rw --cpus --nice --ionice \
                --oom-score-adj --best-effort "implies --unshare user" "implies --unshare uts" \
                "implies --unshare mount,pid" "implies --no-new-privs"; do
        grep -qF -- "$said" "$T/out" || fail "run --help does not say \"$said\""
    done
}

# ------------------------------------------------------------------------

declare -F "case_$CASE" >/dev/null || { echo "no such case: $CASE" >&2; exit 2; }
[ -x "$FL" ] || fail "not executable: $FL"
"case_$CASE"
exit 0
