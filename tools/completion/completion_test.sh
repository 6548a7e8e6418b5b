#!/bin/bash
# completion_test.sh COMPLETION FORKLESS [TOOLS_DIR]: checks the bash
# completion file COMPLETION against the forkless program FORKLESS:
#   - a few completions (subcommands, options, option values, suites, the
#     program after the options);
#   - every option that `forkless run --help` and `forkless pipe --help`
#     show is one the completion offers;
#   - with TOOLS_DIR (the sources), every option of the getopt tables that
#     takes an argument is one the completion knows takes one (else the
#     word after it would be taken for the program).
. "${0%/*}/../../scripts/std-path.sh" # the standard PATH, whatever PATH is
set -u
COMPLETION=${1:?usage: completion_test.sh COMPLETION FORKLESS [TOOLS_DIR]}
FL=${2:?usage: completion_test.sh COMPLETION FORKLESS [TOOLS_DIR]}
TOOLS=${3:-}
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# shellcheck source=forkless.bash disable=SC1091
# shellcheck disable=SC2154 # the option lists come from the completion file
source "$COMPLETION" || { echo "FAIL: cannot source $COMPLETION" >&2; exit 1; }
complete -p forkless >/dev/null 2>&1 || fail "no 'complete' for forkless"

# expect "WANTED" WORD...: completing the last WORD gives WANTED (the
# replies, sorted, joined by spaces); "~WORD" in WANTED: WORD is among them.
expect() {
    local want=$1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _forkless 2>/dev/null
    local got
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ')
    got=${got% }
    if [[ $want == "~"* ]]; then
        [[ " $got " == *" ${want#\~} "* ]] || fail "[$*]: ${want#\~} not in: $got"
    else
        [[ $got == "$want" ]] || fail "[$*]: got '$got', expected '$want'"
    fi
}

# What is offered, and what is not.
expect "run" forkless ru
expect "--help --version bench pipe run" forkless ''
expect "~--version" forkless -
expect "--timeout" forkless run --timeo
expect "~--chdir" forkless run -
expect "posix_spawn" forkless run --backend pos
expect "TERM" forkless run --signal TER
expect "user,net" forkless run --unshare user,ne
expect "NOFILE=" forkless run --rlimit NOF
expect "idle" forkless run --ionice id
expect "--separator" forkless pipe --sep
expect "heap" forkless bench he
expect "~--cpu" forkless bench heap --c
# The program: a command name, after the options and their arguments.
expect "~bash" forkless run --timeout 5 bas
expect "~bash" forkless run -C / -e A=B -- bas
expect "~bash" forkless run -i -- A=B C=D bas
expect "~bash" forkless run -u X A=B bas
expect "~bash" forkless pipe echo x ::: bas
expect "~bash" forkless pipe --separator @@ echo x @@ bas
# The argument of an option is not the program: --timeout's 5 is skipped,
# and "--chdir DIR" completes directories.
expect "~--version" forkless run --timeout 5 --vers
# shellcheck disable=SC2088 # "~WORD": WORD among the replies
expect "~/usr" forkless run --chdir /
# "--backend=fo" as bash splits it at the =.
COMP_LINE="forkless run --backend=fo" COMP_POINT=25 expect "fork" forkless run --backend = fo
unset COMP_LINE COMP_POINT

# Every option in the help is offered.
for sub in run pipe; do
    help=$("$FL" "$sub" --help) || fail "$FL $sub --help failed"
    offered=$(COMP_WORDS=(forkless "$sub" -) COMP_CWORD=2 COMPREPLY=() &&
        _forkless && printf '%s\n' "${COMPREPLY[@]}")
    offered_long=$(COMP_WORDS=(forkless "$sub" --) COMP_CWORD=2 COMPREPLY=() &&
        _forkless && printf '%s\n' "${COMPREPLY[@]}")
    n=0 before=$failures
    for opt in $(grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' <<<"$help" |
                 sed 's/^[ ,]*//' | sort -u); do
        # Only the option column: "  -C, --chdir DIR" and "      --append".
        grep -qE -- "^ +(-[a-zA-Z], )?$opt([ ,=]|$)" <<<"$help" || continue
        n=$((n + 1))
        grep -qx -- "$opt" <<<"$offered
$offered_long" || fail "forkless $sub: $opt (in --help) is not completed"
    done
    [ "$n" -gt 5 ] || fail "forkless $sub --help: only $n options found"
    [ "$failures" -eq "$before" ] && echo "forkless $sub: $n options of --help, all completed"
done

# Every option of the getopt tables that takes an argument is known to.
if [ -n "$TOOLS" ]; then
    check_argopts() {  # LIST FILE...
        local list=$1 opt
        shift
        for opt in $(sed -nE 's/.*\{ *"([a-z0-9-]+)", *required_argument.*/\1/p' "$@"); do
            [[ " ${list//$'\n'/ } " == *" --$opt "* ]] ||
                fail "--$opt takes an argument in $* but not in the completion"
        done
    }
    check_argopts "$_forkless_run_argopts" "$TOOLS/options.c" "$TOOLS/contain_opts.h"
    check_argopts "$_forkless_pipe_argopts" "$TOOLS/pipe.c"
    echo "options with an argument: as in the getopt tables"
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "completion: all checks passed"
