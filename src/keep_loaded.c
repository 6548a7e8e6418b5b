/* keep_loaded.c: keeps this library's code mapped while a launch's child
 * may still run it.
 *
 * A launch's child (FL_NO_WAIT_EXEC) runs the library's setup code after
 * the call that started it has returned, and one stopped before its exec
 * (SIGSTOP, a tracer) runs it whenever it is continued: fl_close() sets
 * its record aside and returns (launch.c's orphans). Where that code came
 * in a plugin, the static archive linked into an object loaded with
 * dlopen(), a dlclose() would unmap it under the child, which would then
 * fault; before Linux 5.16 a core dump also ends every process sharing
 * the memory, the caller too. So at the first launch the object holding
 * this code is made permanent, as -z nodelete makes the shared library:
 * dlopen() of the object's own name with RTLD_NOLOAD (never a new load)
 * and RTLD_NODELETE. Not later, at the record set aside: that may come
 * from the plugin's own destructor, when its unload is under way and can
 * no longer be stopped (so a plugin whose first launch comes in its own
 * destructor is unmapped all the same). The main program is never
 * unloaded, and is left alone (a dlopen() of its name would search the
 * library path for it).
 *
 * dlopen() is looked up, not linked: glibc's static archive warns at
 * link time about any program that names it, and a static program has
 * nothing to keep. The references that are linked are weak, for a libc
 * before 2.34, whose libdl a program that loaded a plugin has. Where any
 * is missing, nothing is done. The calls clear a dlerror() the caller
 * had not yet read, once; errno is kept. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/auxv.h>

#include "internal.h"

extern int dladdr(const void *addr, Dl_info *info) __attribute__((weak));
extern void *dlsym(void *handle, const char *name) __attribute__((weak));
extern char *dlerror(void) __attribute__((weak));

static bool kept;

void fl__keep_code_loaded(void)
{
    /* A flag, not pthread_once(): dladdr() and dlopen() take the loader's
     * lock, and a constructor that launches while another thread is here
     * would hold that lock and wait on the once. Two threads that both
     * get here do the same, harmlessly. */
    if (__atomic_load_n(&kept, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    Dl_info ours, main_program;
    const void *phdr = (const void *)getauxval(AT_PHDR);
    void *(*open_object)(const char *, int) = NULL;
    if (dladdr && dlsym && dladdr((const void *)fl__child_run, &ours) && ours.dli_fname &&
        !(phdr && dladdr(phdr, &main_program) && main_program.dli_fbase == ours.dli_fbase)) {
        *(void **)&open_object = dlsym(RTLD_DEFAULT, "dlopen");
        if ((!open_object || !open_object(ours.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)) &&
            dlerror)
            dlerror();  /* a static program's dlsym(): no error left behind */
    }
    __atomic_store_n(&kept, true, __ATOMIC_RELEASE);
    errno = saved_errno;
}
