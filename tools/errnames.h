/* errnames.h: errno names as errno(3) spells them, for --seccomp-errno. */
#ifndef FL_TOOLS_ERRNAMES_H
#define FL_TOOLS_ERRNAMES_H

/* The value of errno NAME on this architecture: "EACCES", "eacces" (any
 * case), including the aliases (EWOULDBLOCK, EDEADLOCK, ENOTSUP). Returns
 * -1 for a name that is none. */
int errno_by_name(const char *name);

#endif
