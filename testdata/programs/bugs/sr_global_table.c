/* sr_global_table.c: still reachable (the dissertation's possible leak): a table reachable from a global is
   never freed before main returns.

   table_init() allocates the lookup table into the global `table` (the
   root and the symptom: the allocation of the block still allocated when
   main returns). main uses it and returns without freeing it; the global
   still points at the block ("still reachable", which memcheck does not
   count as an error).

   Output: "squares 0 1 4 9 16 25 36 49". */
// expect: still_reachable
// analyze: --all
// memcheck: no (still reachable: listed only with --show-leak-kinds=reachable, not an error)
#include <stdio.h>
#include <stdlib.h>

static long *table;
static int table_len;

__attribute__((noinline)) static void table_init(int n)
{
    table = malloc(n * sizeof *table); //@ bug=still_reachable root=still_reachable
    table_len = n;
    for (int i = 0; i < n; i++)
        table[i] = (long)i * i;
}

int main(void)
{
    table_init(8);
    printf("squares");
    for (int i = 0; i < table_len; i++)
        printf(" %ld", table[i]);
    printf("\n");
    return 0;
}
