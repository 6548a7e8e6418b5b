/* io_arms.h: the arms of the io suite (io.c). Each arm does one piece of
 * work of its part, checks the result (the bytes that came back, every exit
 * status), and returns 0, or non-zero with a message in err. */
#ifndef FL_BENCH_IO_ARMS_H
#define FL_BENCH_IO_ARMS_H

#include <stddef.h>

enum fl_bio_part {
    FL_BIO_CAPTURE,     /* take all of a writer's stdout: MiB/s */
    FL_BIO_RUN,         /* start a program and wait for it: us */
    FL_BIO_PIPELINE,    /* start 4 programs piped together, wait: us */
    FL_BIO_NPARTS
};

#define FL_BIO_STAGES 4

/* What the arms start, set up once by the suite. */
struct fl_bio_job {
    char *const *wargv;      /* { fl-writer, "MIB", NULL } */
    const char *wcmd;        /* the same as a shell command line (popen) */
    size_t bytes;            /* what the writer writes: MIB MiB */
    char *const *targv;      /* { tiny, NULL } */
    const char *tcmd;        /* tiny as a shell command line (system) */
    const char *pcmd;        /* "tiny | tiny | tiny | tiny" */
};

typedef int (*fl_bio_fn)(const struct fl_bio_job *j, char *err, size_t errsz);

struct fl_bio_arm {
    const char *name;
    const char *what;        /* one line for --help */
    enum fl_bio_part part;
    fl_bio_fn run;           /* NULL: a peer program, below */
    /* A peer (bench/peers/) that times its own captures: a script run by
     * python3, or a binary the build made with rustc. */
    const char *peer;
    int reference;           /* the arm its part's ratios are taken against */
};

extern const struct fl_bio_arm fl_bio_arms[];
extern const size_t fl_bio_narms;

#endif
