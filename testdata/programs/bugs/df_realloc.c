/* df_realloc.c: double free where the first free is done by realloc.

   main keeps the address of its vector in `v`, grows it with realloc
   (which moves the block, because `guard` sits after it, and so frees the
   old block: the root) and keeps using the new pointer; at the end it
   frees both the new block and the stale `v` (the symptom).

   Output: "moved yes", "sum 4950 guard", then glibc aborts on free(v) ("free():
   double free detected in tcache 2"). */
// expect: double_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

int main(void)
{
    int *v = malloc(4 * sizeof *v);
    char *guard = malloc(16);
    int *bigger;
    uintptr_t old = (uintptr_t)v;
    long sum = 0;

    for (int i = 0; i < 4; i++)
        v[i] = i;
    strcpy(guard, "guard");
    bigger = realloc(v, 100 * sizeof *v); //@ root=double_free
    printf("moved %s\n", (uintptr_t)bigger != old ? "yes" : "no");
    for (int i = 4; i < 100; i++)
        bigger[i] = i;
    for (int i = 0; i < 100; i++)
        sum += bigger[i];
    printf("sum %ld %s\n", sum, guard);
    fflush(stdout);
    free(guard);
    free(bigger);
    free(v); //@ bug=double_free
    return 0;
}
