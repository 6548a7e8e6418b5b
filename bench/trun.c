/* trun.c: T threads of one parent running one arm at once (trun.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "stats.h"
#include "trun.h"

struct cell {
    const struct fl_arm *arm;
    const struct fl_arm_target *t;
    pthread_mutex_t lock;       /* guards go */
    pthread_cond_t cond;
    int go;
    uint64_t deadline_ns;       /* set before the release; 0 with n */
    unsigned long n;            /* spawns per thread, or 0 */
    atomic_ulong spawns;
    atomic_uint next_cpu;       /* fl_cpu_pin_thread index of the next thread */
    atomic_int failed;
    char err[512];              /* the first failure */
};

static void *worker(void *p)
{
    struct cell *c = p;
    char err[512];
    unsigned long done = 0;
    fl_cpu_pin_thread(atomic_fetch_add(&c->next_cpu, 1));
    pthread_mutex_lock(&c->lock);
    while (!c->go)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
    for (;;) {
        if (atomic_load_explicit(&c->failed, memory_order_relaxed))
            break;
        /* One spawn at least, however short the time: a rate of 0 from
         * a cell that never tried is no measurement. */
        if (c->n ? done >= c->n : done > 0 && fl_bench_now_ns() >= c->deadline_ns)
            break;
        if (c->arm->run(c->t, err, sizeof err) != 0) {
            pthread_mutex_lock(&c->lock);
            if (!atomic_exchange(&c->failed, 1))
                snprintf(c->err, sizeof c->err, "%s", err);
            pthread_mutex_unlock(&c->lock);
            break;
        }
        done++;
    }
    atomic_fetch_add(&c->spawns, done);
    return NULL;
}

int fl_trun(const char *suite, const struct fl_arm *arm, const struct fl_arm_target *t,
            unsigned long nthr, unsigned long n, double seconds, double *rate,
            unsigned long *spawns)
{
    struct cell c = { .arm = arm, .t = t, .n = n };
    pthread_t tid[FL_TRUN_MAX_THREADS];
    atomic_init(&c.spawns, 0);
    atomic_init(&c.next_cpu, 0);
    atomic_init(&c.failed, 0);
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cond, NULL);
    if (nthr > FL_TRUN_MAX_THREADS)
        nthr = FL_TRUN_MAX_THREADS;
    unsigned long started = 0;
    for (; started < nthr; started++) {
        int e = pthread_create(&tid[started], NULL, worker, &c);
        if (e) {
            /* Release the ones that started and make them stop at once. */
            atomic_store(&c.failed, 1);
            snprintf(c.err, sizeof c.err, "pthread_create: %s", strerror(e));
            break;
        }
    }
    /* The deadline is written under the lock that releases the workers. */
    pthread_mutex_lock(&c.lock);
    uint64_t t0 = fl_bench_now_ns();
    c.deadline_ns = n ? 0 : t0 + (uint64_t)(seconds * 1e9);
    c.go = 1;
    pthread_cond_broadcast(&c.cond);
    pthread_mutex_unlock(&c.lock);
    for (unsigned long k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    uint64_t t1 = fl_bench_now_ns();
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.lock);
    if (atomic_load(&c.failed)) {
        fprintf(stderr, "forkless bench %s: %s: %s\n", suite, arm->name, c.err);
        return 1;
    }
    *spawns = atomic_load(&c.spawns);
    *rate = (double)*spawns / ((double)(t1 - t0) / 1e9);
    return 0;
}
