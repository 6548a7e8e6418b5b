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
"  -v, --verbose           report each stage's end on stderr: its number,\n"
"                          program, exit status or signal, and elapsed time\n"
"  -h, --help              show this help\n"
"\n"
"Exit status: as a shell's `set -o pipefail`: that of the rightmost stage\n"
"that did not exit 0 (128+N for one killed by signal N, SIGPIPE included),\n"
"0 when all did; with --last, the last stage's. 124 timed out; 125 a\n"
"forkless error; for a stage that cannot start, named by its number\n"
"(\"forkless pipe: stage 2: exec ...\"), 126 found but not executable, 127\n"
"not found, 125 another setup failure; then no stage runs.\n"
"\n"
"This build parses the command line but cannot run it yet: the library's\n"
"pipelines (fl_pipeline_spawn) are not in it. It exits 125, running\n"
"nothing.\n", stdout);
}
