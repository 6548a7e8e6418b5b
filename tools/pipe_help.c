/* pipe_help.c: `forkless pipe --help`. */
#include <stdio.h>

#include "pipe.h"

void print_pipe_help(void)
{
    fputs(
"Usage: forkless pipe [OPTIONS] [--] CMD [ARG]... ::: CMD [ARG]... [::: ...]\n"
"Run CMD | CMD | ... without a shell: each stage's stdout goes to the next\n"
"one's stdin through a pipe; each stage has its own argv, nothing is\n"
"expanded or split. The stages share one new process group.\n"
"\n"
"  ::: separates the stages: a word of its own, which no shell needs quoted.\n"
"  A stage that has ::: as an argument takes another separator:\n"
"      --separator WORD    separate the stages with WORD instead of :::\n"
"      --timeout DURATION  the whole pipeline's time limit, as for forkless\n"
"                          run: --signal to every stage and their group,\n"
"                          SIGKILL --kill-after later; exit 124 (137 if it\n"
"                          took SIGKILL)\n"
"      --kill-after DURATION  SIGKILL this long after the timeout's signal\n"
"                          (default 5s; 0: at once)\n"
"      --no-kill           never send SIGKILL\n"
"      --signal SIG        the timeout's signal (default TERM)\n"
"      --last              exit as the last stage did, not as pipefail\n"
"  -v, --verbose           at the end, one line a stage on stderr: its number,\n"
"                          program, exit status or signal, and the time from\n"
"                          its start to its reap (all are reaped together,\n"
"                          once the last has ended)\n"
"  -h, --help              show this help\n"
"\n"
"Stage 1 reads forkless's stdin, the last stage writes its stdout, and every\n"
"stage writes its stderr. Signals forkless gets (INT, TERM, HUP, ...) go on\n"
"to every stage and their group, as forkless run passes them to its program.\n"
"\n"
"Exit status: as a shell's `set -o pipefail`: that of the rightmost stage\n"
"that did not exit 0, 0 when all did; with --last, the last stage's. A stage\n"
"killed by signal N (SIGPIPE included: `yes ::: head -1` gives 141, as in\n"
"bash) makes forkless die by N itself, as forkless run does by its\n"
"program's: a shell shows 128+N. After --timeout: 124, or 137 if a stage\n"
"took SIGKILL, whatever the stages' statuses. 125: a forkless error. A\n"
"stage that cannot start is named by its number (\"forkless pipe: stage 2:\n"
"exec ...\"); the stages already started are killed, and forkless exits 126\n"
"found but not executable, 127 not found, 125 another setup failure.\n", stdout);
}
