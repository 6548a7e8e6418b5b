/* plustwo.c: the call suite's program and function. `fl-plustwo N` exits
 * with N + 2 (N from 0 to 253); the call suite also calls fl_plus_two()
 * itself, built into the bench with FL_PLUSTWO_LIBRARY (no main). */
#include <stdlib.h>

int fl_plus_two(int number);

int fl_plus_two(int number)
{
    return number + 2;
}

#ifndef FL_PLUSTWO_LIBRARY
int main(int argc, char **argv)
{
    if (argc < 2)
        return 255;
    return fl_plus_two(atoi(argv[1]));
}
#endif
