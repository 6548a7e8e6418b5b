/* version.c: fl_version(), the version this library was built as. */
#include "internal.h"

const char *fl_version(void)
{
    return FL_VERSION_STRING;
}
