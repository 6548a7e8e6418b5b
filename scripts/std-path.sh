# std-path.sh: sourced (with `.`) by the scripts that CTest runs. Their
# tools (sh, cat, sed, ...) come from the system's standard PATH, whatever
# PATH the suite was started with: an empty one, or none, must not make
# them "not found". The caller's absolute directories follow, for tools
# installed elsewhere (python3, tmux, mandoc); a relative or empty entry,
# which would search the current directory, is dropped. The tools run in
# the C locale: the scripts read their messages and sort their output,
# which a caller's locale would translate and reorder. POSIX sh.
fl_path=$(command -p getconf PATH 2>/dev/null) || fl_path=/bin:/usr/bin
fl_ifs=$IFS
IFS=:
for fl_dir in ${PATH-}; do
    case $fl_dir in /*) fl_path=$fl_path:$fl_dir ;; esac
done
IFS=$fl_ifs
PATH=$fl_path
export PATH
unset fl_path fl_ifs fl_dir
LC_ALL=C
export LC_ALL
