/* sys.h: raw system calls for the child, which must not touch errno (it
 * would write the parent thread's errno, shared under CLONE_VM) or any libc
 * lock. Each returns the kernel's result: >= 0, or -errno. */
#ifndef FL_SYS_H
#define FL_SYS_H

#include <sys/syscall.h>

#if defined(__x86_64__)

static inline __attribute__((always_inline)) long
fl__sys6(long n, long a, long b, long c, long d, long e, long f)
{
    unsigned long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return (long)ret;
}

#elif defined(__aarch64__)

static inline __attribute__((always_inline)) long
fl__sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}

#else
/* Elsewhere libc's syscall() sets errno on failure; the clone backend saves
 * and restores the parent's errno around the child for that reason. */
#include <errno.h>
#include <unistd.h>
static inline long
fl__sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(n, a, b, c, d, e, f);
    return r == -1 ? -errno : r;
}
#endif

#define fl__sys0(n) fl__sys6((n), 0, 0, 0, 0, 0, 0)
#define fl__sys1(n, a) fl__sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define fl__sys2(n, a, b) fl__sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define fl__sys3(n, a, b, c) fl__sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define fl__sys5(n, a, b, c, d, e) \
    fl__sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define fl__sys4(n, a, b, c, d) \
    fl__sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

#endif
