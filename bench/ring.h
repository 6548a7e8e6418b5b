/* ring.h: the single-producer / single-consumer ring of the worker suite,
 * shared by the suite (producer, and consumer in its thread and fork arms)
 * and by fl-worker (consumer in the arms that start a program). The ring
 * lives in a memfd mapped MAP_SHARED: one header page, then the slots. */
#ifndef FL_BENCH_RING_H
#define FL_BENCH_RING_H

#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define FL_RING_MAGIC 0x676e69726c66ull   /* "flring" */
#define FL_RING_HDR 4096u

/* One record: its sequence number and a value the consumer adds up. */
struct fl_ring_rec {
    uint64_t seq;
    uint64_t val;
};

struct fl_ring_hdr {
    uint64_t magic;
    uint64_t slots;                           /* a power of two */
    _Alignas(64) _Atomic uint64_t tail;       /* written by the producer */
    _Alignas(64) _Atomic uint64_t head;       /* written by the consumer */
    _Alignas(64) _Atomic uint32_t closed;     /* producer: no more records */
    _Atomic uint32_t ready;                   /* consumer: mapped, waiting */
    _Atomic uint32_t done;                    /* consumer: results below */
    uint64_t ready_ns;                        /* CLOCK_MONOTONIC at ready */
    uint64_t count;                           /* records consumed */
    uint64_t sum;                             /* their values, mod 2^64 */
    uint64_t bad_seq;                         /* records out of sequence */
    int32_t producer;                         /* the producer's pid */
};

_Static_assert(sizeof(struct fl_ring_hdr) <= FL_RING_HDR, "ring header too big");

static inline size_t fl_ring_bytes(uint64_t slots)
{
    return FL_RING_HDR + (size_t)slots * sizeof(struct fl_ring_rec);
}

static inline struct fl_ring_rec *fl_ring_slots(struct fl_ring_hdr *h)
{
    return (struct fl_ring_rec *)((char *)h + FL_RING_HDR);
}

/* The value of record i: spread over 64 bits so a lost or doubled record
 * changes the sum. */
static inline uint64_t fl_ring_val(uint64_t i)
{
    return (i + 1) * 0x9e3779b97f4a7c15ull;
}

/* The sum of records 0 to n-1, modulo 2^64: K * n(n+1)/2, the halving
 * done on whichever of n and n+1 is even, in closed form, since a loop
 * over billions of records (a run meant to be killed) takes seconds. */
static inline uint64_t fl_ring_sum(uint64_t n)
{
    uint64_t triangle = n % 2 == 0 ? (n / 2) * (n + 1) : n * ((n + 1) / 2);
    return triangle * fl_ring_val(0);
}

static inline uint64_t fl_ring_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Waiting on the other side: spin a little, then give the CPU away (on a
 * machine with fewer cores than runnable threads, spinning alone starves
 * the side being waited for). */
static inline void fl_ring_backoff(unsigned *spins)
{
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    sched_yield();
}

/* The consumer: says it is ready, takes every record until the producer
 * closes the ring, and leaves count, sum and bad_seq in the header. A
 * consumer that is a process of its own, the producer's child, also
 * stops once the producer is gone (killed mid-run, say): it would spin
 * for no one, an orphan at full speed. */
static inline void fl_ring_consume(struct fl_ring_hdr *h)
{
    struct fl_ring_rec *s = fl_ring_slots(h);
    uint64_t mask = h->slots - 1, head = 0, count = 0, sum = 0, bad = 0;
    unsigned spins = 0;
    pid_t producer = (pid_t)h->producer;
    bool watch = producer > 0 && producer != getpid();
    h->ready_ns = fl_ring_now_ns();
    atomic_store_explicit(&h->ready, 1, memory_order_release);
    for (;;) {
        uint64_t tail = atomic_load_explicit(&h->tail, memory_order_acquire);
        if (tail == head) {
            if (atomic_load_explicit(&h->closed, memory_order_acquire) &&
                atomic_load_explicit(&h->tail, memory_order_acquire) == head)
                break;
            if (watch && spins >= 64 && getppid() != producer)
                break;
            fl_ring_backoff(&spins);
            continue;
        }
        spins = 0;
        for (; head != tail; head++) {
            const struct fl_ring_rec *r = &s[head & mask];
            bad += r->seq != head;
            sum += r->val;
            count++;
        }
        atomic_store_explicit(&h->head, head, memory_order_release);
    }
    h->count = count;
    h->sum = sum;
    h->bad_seq = bad;
    atomic_store_explicit(&h->done, 1, memory_order_release);
}

#endif
