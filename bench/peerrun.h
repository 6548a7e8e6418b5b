/* peerrun.h: finding and running a peer program (bench/peers/: a script or
 * a binary in another runtime that times its own work and prints one line
 * per sample), shared by the peers and io suites. */
#ifndef FL_BENCH_PEERRUN_H
#define FL_BENCH_PEERRUN_H

#include <stddef.h>
#include <stdint.h>

/* The peers' sources ($FORKLESS_PEERS_SRC, else the build's bench/peers)
 * and their build directory ($FORKLESS_PEERS_BIN, else the build's). */
const char *fl_peers_src_dir(void);
const char *fl_peers_bin_dir(void);

/* Is p a regular file? */
int fl_is_file(const char *p);

/* Finds name in $PATH with the PATH rules of fl_spawn(). Returns 0 or an
 * errno value. */
int fl_peer_find_prog(const char *name, char *buf, size_t size);

/* A script of the sources run by runtime (found in $PATH): sets prog (the
 * runtime) and script. Returns 1 when both are there, else 0 with the
 * reason in skip. prog and script have PATH_MAX bytes. */
int fl_peer_script(const char *runtime, const char *name, char *prog, char *script,
                   char *skip, size_t skipsz);

/* A binary of the peers' build directory: sets prog. built says whether its
 * toolchain was found at build time, why is the reason when it was not.
 * Returns 1 when it is there, else 0 with the reason in skip. */
int fl_peer_binary(const char *name, int built, const char *why, char *prog,
                   char *skip, size_t skipsz);

/* The seconds a peer may run before it is taken for hung: FL_PEER_START_S
 * (a runtime's start on a busy machine), once_s, and run_s for each of its
 * runs, the untimed ones too. Far more than a healthy peer takes, so that
 * only a hung one reaches it. FORKLESS_PEER_TIMEOUT=SECONDS (a whole number
 * from 1) sets another. */
#define FL_PEER_START_S 120ul
unsigned long fl_peer_deadline_s(unsigned long runs, unsigned long run_s,
                                 unsigned long once_s);

/* Runs argv (argv[0] an absolute path) with its stdout captured, in a
 * process group of its own that is killed after timeout_s seconds (it has
 * then failed: "timed out after N s"), and dies with the bench: a line "# version V" sets version, other lines starting with
 * '#' and empty ones are skipped, and every other line is one sample in
 * microseconds, stored in nanoseconds at samples[(*got)++]. Returns 0 when
 * the peer exited 0 having printed exactly want samples; otherwise 1 with
 * the reason in failed. */
int fl_peer_collect(char *const *argv, unsigned long want, unsigned long timeout_s,
                    uint64_t *samples, size_t *got, char *version, size_t vsize,
                    char *failed, size_t fsize);

#endif
