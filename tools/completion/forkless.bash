# bash completion for forkless(1)                          -*- shell-script -*-
#
# Installed as share/bash-completion/completions/forkless. Completes the
# subcommands, the options of `forkless run` and `forkless pipe` and the
# values of some (signals, backends, namespaces, files, users), the bench
# suites and their options (from `forkless bench SUITE --help`), then the
# program and its own arguments (bash-completion's command completion
# where it is loaded, else file names).
#
# The option lists are static: tools/completion/completion_test.sh checks
# that they hold every option of `forkless run --help` and `forkless pipe
# --help` and every option of the source tables that takes an argument.

# shellcheck disable=SC2207 # COMPREPLY=($(compgen ...)): the usual idiom
_forkless_run_opts='-C --chdir -e --env -u --unset -i --clear-env --ignore-environment -a --argv0
 --path-relative --stdin --stdout --stderr --append --stderr-to-stdout --fd
 --keep-fds --keep-signals --default-signal --ignore-signal --block-signal
 --setsid --pgroup --rlimit --umask --user --cgroup --kill-with-parent
 --unshare --map-root-user --map-current-user --hostname --mount-proc --chroot
 --no-new-privs --caps --ambient-caps --seccomp-deny --seccomp-errno
 --landlock-ro --landlock-rx --landlock-rw --cpus --nice --ionice
 --oom-score-adj --best-effort --pty --pty-size --timeout -s --signal
 -k --kill-after --no-kill -p --preserve-status -f --foreground --kill-tree --backend
 --no-fork --shell-fallback --retry-etxtbsy --time -v --verbose -h --help
 --version'
# The options of run that take an argument (the next word, or after =).
_forkless_run_argopts='-C --chdir -e --env -u --unset -a --argv0 --stdin
 --stdout --stderr --fd --default-signal --ignore-signal --block-signal
 --rlimit --umask --user --cgroup --unshare --hostname --chroot --caps
 --ambient-caps --seccomp-deny --seccomp-errno --landlock-ro --landlock-rx
 --landlock-rw --cpus --nice --ionice --oom-score-adj --pty-size --timeout
 -s --signal -k --kill-after --backend'
_forkless_pipe_opts='--separator --timeout -k --kill-after --no-kill -s --signal
 --last --time -v --verbose -h --help --version'
_forkless_pipe_argopts='--separator --timeout -k --kill-after -s --signal'
_forkless_bench_suites='heap threads peers worker loop call launch io sandbox
 all'
_forkless_signals='HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2
 PIPE ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM
 PROF WINCH IO PWR SYS RTMIN RTMAX'

# _forkless_in WORD LIST: whether WORD is one of LIST's words.
_forkless_in()
{
    local w
    for w in $2; do
        [[ $w == "$1" ]] && return 0
    done
    return 1
}

# _forkless_values WORDS: COMPREPLY from WORDS for $cur; for a
# comma-separated list, only its last element is completed.
_forkless_values()
{
    local head='' tail=$cur
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        tail=${cur##*,}
    fi
    local w
    COMPREPLY=()
    for w in $(compgen -W "$1" -- "$tail"); do
        COMPREPLY+=("$head$w")
    done
}

_forkless_nospace()
{
    compopt -o nospace 2>/dev/null
}

_forkless_files()  # [-d]: file (or directory) names for $cur
{
    local IFS=$'\n'
    COMPREPLY=($(compgen "${1:--f}" -- "$cur"))
    compopt -o filenames 2>/dev/null
}

# _forkless_optarg OPTION: completes $cur as OPTION's argument.
_forkless_optarg()
{
    case $1 in
    -C | --chdir | --chroot | --cgroup) _forkless_files -d ;;
    --stdin | --stdout | --stderr | --landlock-ro | --landlock-rx | --landlock-rw)
        _forkless_files -f ;;
    -e | --env)
        COMPREPLY=($(compgen -e -S = -- "$cur"))
        _forkless_nospace
        ;;
    -u | --unset) COMPREPLY=($(compgen -e -- "$cur")) ;;
    --user) COMPREPLY=($(compgen -u -- "$cur")) ;;
    --backend) COMPREPLY=($(compgen -W 'auto clone posix_spawn fork' -- "$cur")) ;;
    --signal | --default-signal | --ignore-signal | --block-signal)
        _forkless_values "$_forkless_signals" ;;
    --unshare) _forkless_values 'user mount pid net ipc uts cgroup time' ;;
    --ionice) COMPREPLY=($(compgen -W 'realtime best-effort idle' -- "$cur")) ;;
    --seccomp-errno)
        COMPREPLY=($(compgen -W 'EPERM EACCES ENOSYS ENOENT EINVAL EROFS ENOTSUP' -- "$cur")) ;;
    --rlimit)
        if [[ $cur != *=* ]]; then
            COMPREPLY=($(compgen -S = -W 'AS CORE CPU DATA FSIZE LOCKS MEMLOCK
                MSGQUEUE NICE NOFILE NPROC RSS RTPRIO RTTIME SIGPENDING STACK' -- "$cur"))
            _forkless_nospace
        fi
        ;;
    *) COMPREPLY=() ;;  # a number, a duration, a name: nothing to offer
    esac
}

# _forkless_command INDEX: completes the program at words[INDEX] and its
# arguments.
_forkless_command()
{
    if ((cword == $1)); then
        local IFS=$'\n'
        if [[ $cur == */* ]]; then
            _forkless_files -f
        else
            COMPREPLY=($(compgen -c -- "$cur" | sort -u))
        fi
        return
    fi
    # bash-completion's command completion, which counts in COMP_WORDS.
    if declare -F _comp_command_offset >/dev/null; then
        _comp_command_offset "${wstart[$1]}"
    elif declare -F _command_offset >/dev/null; then
        _command_offset "${wstart[$1]}"
    else
        _forkless_files -f
    fi
}

# _forkless_options OPTS ARGOPTS: $cur as an option, or as the argument of
# the option before it (or after its =). Returns 1 if $cur is neither.
_forkless_options()
{
    # After --opt= bash replaces only what follows the = (a word break).
    if [[ $cur == --*=* ]]; then
        local opt=${cur%%=*}
        if _forkless_in "$opt" "$2"; then
            cur=${cur#*=}
            _forkless_optarg "$opt"
            return 0
        fi
    fi
    if _forkless_in "$prev" "$2"; then
        _forkless_optarg "$prev"
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$1" -- "$cur"))
        return 0
    fi
    return 1
}

# _forkless_run_program N: the operands start at words[N]; the program is
# the first that is not NAME=VALUE (env(1)'s variables).
_forkless_run_program()
{
    local i=$1
    while ((i < cword)) && [[ ${words[i]} == *=* ]]; do
        ((i++))
    done
    _forkless_command "$i"
}

_forkless_run()
{
    # Where does the program start? After --, or at the first word that is
    # neither an option nor an option's argument.
    local i=2 w
    while ((i < cword)); do
        w=${words[i]}
        if [[ $w == -- ]]; then
            _forkless_run_program $((i + 1))
            return
        elif [[ $w == -* ]]; then
            _forkless_in "$w" "$_forkless_run_argopts" && ((i++))
        else
            _forkless_run_program "$i"
            return
        fi
        ((i++))
    done
    _forkless_options "$_forkless_run_opts" "$_forkless_run_argopts" ||
        _forkless_command "$cword"
}

_forkless_pipe()
{
    local i=2 w sep=::: stage=
    while ((i < cword)); do
        w=${words[i]}
        if [[ -z $stage ]]; then  # options
            if [[ $w == -- ]]; then
                stage=$((i + 1))
            elif [[ $w == --separator ]]; then
                ((i++))
                sep=${words[i]}
            elif [[ $w == --separator=* ]]; then
                sep=${w#*=}
            elif [[ $w == -* ]]; then
                _forkless_in "$w" "$_forkless_pipe_argopts" && ((i++))
            else
                stage=$i
            fi
        elif [[ $w == "$sep" ]]; then
            stage=$((i + 1))
        fi
        ((i++))
    done
    if [[ -z $stage ]]; then
        _forkless_options "$_forkless_pipe_opts" "$_forkless_pipe_argopts" ||
            _forkless_command "$cword"
        return
    fi
    _forkless_command "$stage"
}

_forkless_bench()
{
    local suite=${words[2]}
    if ((cword == 2)) && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$_forkless_bench_suites" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        _forkless_in "$suite" "$_forkless_bench_suites" || suite=
        # The suite's own help lists its options.
        local opts
        opts=$("${words[0]}" bench ${suite:+"$suite"} --help 2>/dev/null |
            grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
        COMPREPLY=($(compgen -W "${opts:---help --cpu}" -- "$cur"))
    fi
}

# _forkless_words: words, cword, wstart (the COMP_WORDS index where each
# word starts) from COMP_WORDS, where bash splits "--signal=TERM" or
# "-e A=B" at the = (COMP_WORDBREAKS): the pieces that no blank separates in
# COMP_LINE are joined again.
_forkless_words()
{
    words=() wstart=() cword=0
    local line=${COMP_LINE-} i w trimmed n=-1
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        trimmed=${line#"${line%%[![:blank:]]*}"}
        if ((n >= 0)) && [[ -n $line && ${#trimmed} -eq ${#line} ]] &&
            [[ $w == [=:]* || ${words[n]} == *[=:] ]]; then
            words[n]+=$w
        else
            words[++n]=$w
            wstart[n]=$i
        fi
        ((i == COMP_CWORD)) && cword=$n
        line=${trimmed:${#w}}
    done
    ((COMP_CWORD >= ${#COMP_WORDS[@]})) && { words[++n]=; wstart[n]=$COMP_CWORD; cword=$n; }
    return 0
}

_forkless()
{
    local words wstart cword cur prev=
    _forkless_words
    cur=${words[cword]}
    ((cword > 0)) && prev=${words[cword - 1]}
    COMPREPLY=()
    if ((cword == 1)); then
        COMPREPLY=($(compgen -W 'run pipe bench --help --version' -- "$cur"))
        return
    fi
    case ${words[1]} in
    run) _forkless_run ;;
    pipe) _forkless_pipe ;;
    bench) _forkless_bench ;;
    esac
}
complete -F _forkless forkless
