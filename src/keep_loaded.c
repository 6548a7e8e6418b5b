/* keep_loaded.c: keeps this library's code mapped while a child that
 * fl_close() set aside may still run it.
 *
 * A launch's child stopped before its exec (launch.c's orphans) runs the
 * library's setup code again once it is continued. Where that code came
 * in a plugin, the static archive linked into an object loaded with
 * dlopen(), a dlclose() would unmap it under the child, which would then
 * fault; before Linux 5.16 a core dump also ends every process sharing
 * the memory, the caller too. So the object holding this code is made
 * permanent, as -z nodelete makes the shared library, at the first
 * record set aside: dlopen() of the object's own name with RTLD_NOLOAD
 * (never a new load) and RTLD_NODELETE. A dlclose() then leaves it
 * mapped, and the child runs its setup and exec as if nothing happened.
 *
 * dlopen() is looked up, not linked: glibc's static archive warns at
 * link time about any program that names it, and a static program,
 * which nothing unloads, has nothing to keep. The references that are
 * linked are weak, for a libc before 2.34, whose libdl a program that
 * loaded a plugin has. Where any is missing, nothing is done. */
#include <dlfcn.h>
#include <stdbool.h>

#include "internal.h"

extern int dladdr(const void *addr, Dl_info *info) __attribute__((weak));
extern void *dlsym(void *handle, const char *name) __attribute__((weak));
extern char *dlerror(void) __attribute__((weak));

static bool kept;

void fl__keep_code_loaded(void)
{
    if (__atomic_load_n(&kept, __ATOMIC_ACQUIRE) || !dladdr || !dlsym)
        return;
    Dl_info info;
    void *(*open_object)(const char *, int);
    *(void **)&open_object = dlsym(RTLD_DEFAULT, "dlopen");
    if (open_object && dladdr((const void *)fl__child_run, &info) && info.dli_fname &&
        open_object(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE))
        __atomic_store_n(&kept, true, __ATOMIC_RELEASE);
    else if (dlerror)
        dlerror();  /* a static program, or the main one by another name: no error left behind */
}
