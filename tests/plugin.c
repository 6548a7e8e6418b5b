/* plugin.c: an object that test_threads.c loads with dlopen() and unloads
 * again, holding its own copy of the library (the static archive), as a
 * plugin built on forkless would. Naming the calls pulls them, and what
 * they use, out of the archive; the cases find them with dlsym(). */
#include "forkless.h"

void *const fl_test_plugin_calls[] = { (void *)fl_spawn, (void *)fl_wait, (void *)fl_close };
