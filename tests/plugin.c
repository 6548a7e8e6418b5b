/* plugin.c: an object that test_threads.c loads with dlopen() and unloads
 * again, holding its own copy of the library (the static archive), as a
 * plugin built on forkless would. Naming the calls pulls them, and what
 * they use, out of the archive; the cases find them with dlsym(). */
#include "forkless.h"

void *const fl_test_plugin_calls[] = { (void *)fl_spawn, (void *)fl_wait, (void *)fl_close };

/* A handle the plugin keeps, and closes as it is unloaded, as a plugin
 * that cleans up in its destructor does. */
static struct fl_proc held;
static int holding;

void fl_test_plugin_hold(const struct fl_proc *p)
{
    held = *p;
    holding = 1;
}

void fl_test_plugin_release(void)
{
    if (holding)
        fl_close(&held);
    holding = 0;
}

__attribute__((destructor)) static void close_held(void)
{
    fl_test_plugin_release();
}
