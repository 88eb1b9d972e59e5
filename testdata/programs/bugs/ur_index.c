/* ur_index.c: an uninitialised heap value used as an array index, in the
   function that allocated it.

   main allocates an order array of n ints (the root) and fills all but
   the last slot (the fill loop stops at n - 1), then sums table[order[i]]
   for every i (the symptom: for i = n - 1 the index is uninitialised; the
   load of order[i] and its use as an index are on one line). Natively
   the slot is zero, so table[0] is added.

   Output: "sum 76" (natively: table[4] + ... + table[0] = 65, plus
   table[0] = 11 again for the unset slot, which is zero). */
// expect: uninitialized_read
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

static const long table[8] = {11, 12, 13, 14, 15, 16, 17, 18};

int main(int argc, char **argv)
{
    int n = argc + 5;
    int *order = malloc(n * sizeof *order); //@ root=uninitialized_read
    long sum = 0;

    (void)argv;
    for (int i = 0; i < n - 1; i++)
        order[i] = n - 2 - i;
    for (int i = 0; i < n; i++)
        sum += table[order[i]]; //@ bug=uninitialized_read
    printf("sum %ld\n", sum);
    free(order);
    return 0;
}
