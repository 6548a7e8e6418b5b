/* errnames.c: every errno name of Linux's, with this architecture's value
 * (the numbers differ on alpha, mips, parisc and sparc). */
#include "errnames.h"

#include <errno.h>
#include <stddef.h>
#include <strings.h>

#define E(name) { #name, name }

static const struct {
    const char *name;
    int value;
} errnos[] = {
    E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC),
    E(EBADF), E(ECHILD), E(EAGAIN), E(EWOULDBLOCK), E(ENOMEM), E(EACCES), E(EFAULT),
    E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV), E(ENOTDIR), E(EISDIR),
    E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY), E(ETXTBSY), E(EFBIG), E(ENOSPC),
    E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK),
    E(EDEADLOCK), E(ENAMETOOLONG), E(ENOLCK), E(ENOSYS), E(ENOTEMPTY), E(ELOOP),
    E(ENOMSG), E(EIDRM), E(ECHRNG), E(EL2NSYNC), E(EL3HLT), E(EL3RST), E(ELNRNG),
    E(EUNATCH), E(ENOCSI), E(EL2HLT), E(EBADE), E(EBADR), E(EXFULL), E(ENOANO),
    E(EBADRQC), E(EBADSLT), E(EBFONT), E(ENOSTR), E(ENODATA), E(ETIME), E(ENOSR),
    E(ENONET), E(ENOPKG), E(EREMOTE), E(ENOLINK), E(EADV), E(ESRMNT), E(ECOMM),
    E(EPROTO), E(EMULTIHOP), E(EDOTDOT), E(EBADMSG), E(EOVERFLOW), E(ENOTUNIQ),
    E(EBADFD), E(EREMCHG), E(ELIBACC), E(ELIBBAD), E(ELIBSCN), E(ELIBMAX), E(ELIBEXEC),
    E(EILSEQ), E(ERESTART), E(ESTRPIPE), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ),
    E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT),
    E(EOPNOTSUPP), E(ENOTSUP), E(EPFNOSUPPORT), E(EAFNOSUPPORT), E(EADDRINUSE),
    E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH), E(ENETRESET), E(ECONNABORTED),
    E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS),
    E(ETIMEDOUT), E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
    E(EINPROGRESS), E(ESTALE), E(EUCLEAN), E(ENOTNAM), E(ENAVAIL), E(EISNAM),
    E(EREMOTEIO), E(EDQUOT), E(ENOMEDIUM), E(EMEDIUMTYPE), E(ECANCELED), E(ENOKEY),
    E(EKEYEXPIRED), E(EKEYREVOKED), E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE),
    E(ERFKILL), E(EHWPOISON),
};

int errno_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
        if (strcasecmp(name, errnos[i].name) == 0)
            return errnos[i].value;
    return -1;
}
