/* exec_format.c: what exec will make of a file before it runs it, read
 * in the parent: a script's #! line, and an ELF program's interpreter
 * (its dynamic loader). exec fails with ENOENT for a file that is there
 * when either names a file that is not, and a PATH search goes on past
 * such a file: the posix_spawn backend and fl_resolve(), which pick one
 * candidate before the spawn, must pass over it as the child's own search
 * does, and an error message must name what is missing. */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}


/* The ELF class and machine this build runs as: the ones binfmt_elf
 * takes. Another's (a 32-bit program on a 64-bit kernel, through the
 * compat loader, or one for another machine, ENOEXEC) is not judged. */
#if defined(__x86_64__) && defined(__LP64__)
#define NATIVE_CLASS ELFCLASS64
#define NATIVE_MACHINE EM_X86_64
#elif defined(__i386__)
#define NATIVE_CLASS ELFCLASS32
#define NATIVE_MACHINE EM_386
#elif defined(__aarch64__) && defined(__LP64__)
#define NATIVE_CLASS ELFCLASS64
#define NATIVE_MACHINE EM_AARCH64
#elif defined(__arm__)
#define NATIVE_CLASS ELFCLASS32
#define NATIVE_MACHINE EM_ARM
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_CLASS ELFCLASS64
#define NATIVE_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define NATIVE_CLASS ELFCLASS64
#define NATIVE_MACHINE EM_PPC64
#elif defined(__s390x__)
#define NATIVE_CLASS ELFCLASS64
#define NATIVE_MACHINE EM_S390
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

#ifdef NATIVE_CLASS
#if NATIVE_CLASS == ELFCLASS64
typedef Elf64_Ehdr native_ehdr;
typedef Elf64_Phdr native_phdr;
#else
typedef Elf32_Ehdr native_ehdr;
typedef Elf32_Phdr native_phdr;
#endif

/* binfmt_elf's read of the program interpreter (load_elf_binary()): the
 * first PT_INTERP entry names it, a NUL-terminated path of 2 to PATH_MAX
 * bytes. False for a file that is not this machine's ELF program, or whose
 * headers the kernel would refuse (ENOEXEC), or whose loader's name does
 * not fit in interp: those are left to exec. */
static bool elf_loader(int fd, const char *head, size_t n, char interp[FL__BINPRM_BUF_SIZE])
{
    native_ehdr eh;
    if (n < sizeof eh)
        return false;
    memcpy(&eh, head, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != NATIVE_CLASS ||
        eh.e_ident[EI_DATA] != NATIVE_DATA || eh.e_machine != NATIVE_MACHINE ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_phentsize != sizeof(native_phdr) ||
        eh.e_phnum == 0)
        return false;
    /* The kernel reads at most 64 KiB of program headers; so does this,
     * a few at a time, as the caller's stack may be a thread's smallest. */
    native_phdr ph[8];
    size_t left = eh.e_phnum, at = 0;
    if (left * sizeof *ph > 65536)
        return false;
    while (left) {
        size_t count = left < sizeof ph / sizeof *ph ? left : sizeof ph / sizeof *ph;
        ssize_t got = pread(fd, ph, count * sizeof *ph, (off_t)(eh.e_phoff + at * sizeof *ph));
        if (got != (ssize_t)(count * sizeof *ph))
            return false;
        for (size_t i = 0; i < count; i++) {
            if (ph[i].p_type != PT_INTERP)
                continue;
            size_t len = (size_t)ph[i].p_filesz;
            if (len < 2 || len > FL__BINPRM_BUF_SIZE ||
                pread(fd, interp, len, (off_t)ph[i].p_offset) != (ssize_t)len || interp[len - 1])
                return false;
            return true;
        }
        left -= count;
        at += count;
    }
    return false;
}
#else
static bool elf_loader(int fd, const char *head, size_t n, char interp[FL__BINPRM_BUF_SIZE])
{
    (void)fd, (void)head, (void)n, (void)interp;
    return false;
}
#endif

/* binfmt_script's parse (Linux 5.0 and later) of the first
 * FL__BINPRM_BUF_SIZE bytes, which the kernel pads with NULs. The line ends
 * at the first '\n' before any NUL. Without one, the interpreter's name
 * must end (at a blank or a NUL) by the buffer's last byte: the kernel will
 * not run a name it may have cut short, and says ENOEXEC. */
enum fl__shebang fl__shebang_at(int dir, const char *path, char interp[FL__BINPRM_BUF_SIZE])
{
    /* Only a regular file: exec runs nothing else, and opening a FIFO or
     * a device has effects of its own (a FIFO's blocked writer goes on,
     * and what it writes is read here and lost). Looked at before the
     * open and checked after it, as the name may change between. */
    struct stat before, st;
    if (fstatat(dir, path, &before, 0) < 0 || !S_ISREG(before.st_mode))
        return FL__SHEBANG_NONE;
    int fd = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return FL__SHEBANG_NONE;
    char buf[FL__BINPRM_BUF_SIZE] = { 0 };
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == before.st_ino &&
                        st.st_dev == before.st_dev
                    ? read(fd, buf, sizeof buf)
                    : -1;
    bool loader = n > 0 && elf_loader(fd, buf, (size_t)n, interp);
    close(fd);
    if (loader)
        return FL__SHEBANG_LOADER;
    if (n < 2 || buf[0] != '#' || buf[1] != '!')
        return FL__SHEBANG_NONE;
    const char *last = buf + sizeof buf - 1, *end = NULL, *s;
    for (s = buf; s <= last && *s && !end; s++)
        if (*s == '\n')
            end = s;
    if (!end) {
        for (s = buf + 2; s <= last && blank(*s); s++)
            ;
        while (s <= last && *s && !blank(*s))
            s++;
        if (s > last)
            return FL__SHEBANG_TOO_LONG;
        end = last;   /* the kernel ends the line there, whatever it holds */
    }
    while (blank(end[-1]))
        end--;
    for (s = buf + 2; s < end && blank(*s); s++)
        ;
    if (s == end)
        return FL__SHEBANG_NO_NAME;
    size_t len = 0;
    while (s + len < end && s[len] && !blank(s[len]))
        len++;
    memcpy(interp, s, len);
    interp[len] = '\0';
    return len ? FL__SHEBANG_INTERP : FL__SHEBANG_EMPTY;
}

