/* tarantula.c: a seeded fault for spectrum-based fault localization.

   Exercises: statement coverage that differs between runs by argv, for
   the Tarantula / Ochiai ranking (tarantula/, analyze tarantula). mid()
   is the middle-of-three function of the Tarantula papers (Jones,
   Harrold and Stasko, ICSE 2002), with their seeded fault: the line
   marked BUG assigns y where it should assign x. It runs only when
   y < z, x >= y and x < z.

   m is volatile so that every assignment stays a store on its own branch
   at -O1 (otherwise gcc turns the branches into conditional moves, and
   every run executes every line).

   Usage: tarantula X Y Z   three integers.

   Output (stdout): "mid M" with M = mid(X, Y, Z) as computed, buggy or
   not; exit 0. Usage error: a message on stderr, exit 2.

   Inputs and lines (a test should assert the ranking they give):
       tarantula 2 1 3   mid 1, wrong (2): the only run through BUG
       tarantula 1 2 3   mid 2, right: the x < y branch
       tarantula 5 2 3   mid 3, right: the x < z test, false
       tarantula 3 2 1   mid 2, right: the y >= z half
   With the first as the failing run and the other three as passing
   runs, the BUG line is the only statement executed by the failing run
   alone: it ranks first, Tarantula 1.0, Ochiai 1.0. mid_fixed, the
   function without the fault, is never called: no run covers its lines
   (the line marked NEVER among them). */
#include <stdio.h>
#include <stdlib.h>

/* mid returns the middle value of x, y and z, except on the BUG line. */
__attribute__((noinline)) static int
mid(int x, int y, int z)
{
    volatile int m;

    m = z;
    if (y < z) {
        if (x < y)
            m = y;
        else if (x < z)
            m = y; /* BUG: should be m = x */
    } else {
        if (x > y)
            m = y;
        else if (x > z)
            m = x;
    }
    return m;
}

/* mid_fixed is mid without the fault. Nothing calls it; it is not
   static, so gcc keeps it. */
int
mid_fixed(int x, int y, int z)
{
    if ((x <= y && y <= z) || (z <= y && y <= x))
        return y; /* NEVER */
    if ((y <= x && x <= z) || (z <= x && x <= y))
        return x;
    return z;
}

int
main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tarantula X Y Z\n");
        return 2;
    }
    printf("mid %d\n", mid(atoi(argv[1]), atoi(argv[2]), atoi(argv[3])));
    return 0;
}
