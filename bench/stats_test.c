/* stats_test.c: the harness's arithmetic that the tables rest on, checked
 * with worked examples: medians of odd and even counts, and the decimals
 * with which a goal's ratio is printed apart from its bound. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

static int failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond);   \
            failed = 1;                                                        \
        }                                                                      \
    } while (0)

/* x printed with fl_decimals_apart() against bound. */
static const char *apart(double x, double bound, int d)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "%.*f", fl_decimals_apart(x, bound, d), x);
    return buf;
}

int main(void)
{
    /* A goal decided on the exact ratio reads the same from the figure. */
    CHECK(strcmp(apart(0.3004, 0.30, 2), "0.3004") == 0);  /* not <= 0.30 */
    CHECK(strcmp(apart(0.8996, 0.90, 2), "0.8996") == 0);  /* not >= 0.90 */
    CHECK(strcmp(apart(0.9496, 0.95, 2), "0.9496") == 0);
    CHECK(strcmp(apart(1.0004, 1.0, 3), "1.0004") == 0);
    CHECK(strcmp(apart(0.31, 0.30, 2), "0.31") == 0);      /* apart already */
    CHECK(strcmp(apart(0.30, 0.30, 2), "0.30") == 0);      /* equal: as it is */
    CHECK(fl_decimals_apart(0.3000001, 0.30, 2) == 6);     /* at most 6 */

    /* Medians: the middle one, or the mean of the middle two. */
    uint64_t odd[] = { 3000, 1000, 2000 }, even[] = { 4000, 1000, 3000, 2000 };
    struct fl_summary s;
    fl_summarize(odd, 3, &s);
    CHECK(s.n == 3 && s.min_us == 1.0 && s.median_us == 2.0 && s.max_us == 3.0);
    fl_summarize(even, 4, &s);
    CHECK(s.n == 4 && s.min_us == 1.0 && s.median_us == 2.5 && s.max_us == 4.0);
    return failed;
}
