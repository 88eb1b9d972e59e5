/* ho_underflow_read.c: heap buffer under-read: element i-1 read for i = 0,
   allocation and read in one function.

   main allocates 6 ints (the root), fills them, and computes the
   differences d[i] - d[i-1] starting at i = 0 (the symptom: d[-1] is the
   4 bytes before the block; natively the upper half of glibc's chunk
   size field, zero).

   Output: "deltas 3 2 2 2 2 2" (natively). */
// expect: heap_buffer_overflow
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc + 5;
    int *d = malloc(n * sizeof *d); //@ root=heap_buffer_overflow

    (void)argv;
    for (int i = 0; i < n; i++)
        d[i] = 3 + 2 * i;
    printf("deltas");
    for (int i = 0; i < n; i++) {
        int delta = d[i] - d[i - 1]; //@ bug=heap_buffer_overflow
        printf(" %d", delta);
    }
    printf("\n");
    free(d);
    return 0;
}
