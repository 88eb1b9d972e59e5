/* ho_read_off_by_one.c: heap buffer over-read by one element (a `<=` loop
   bound), allocation and read in one function.

   main allocates 8 longs (the root), fills them with squares and sums
   them with `i <= n`, reading v[8] (the symptom), 64 bytes past the
   start: natively that is the unused tail of glibc's chunk, zero.

   Output: "sum 140" (natively; 0+1+...+49 plus the zero read past the
   end). */
// expect: heap_buffer_overflow
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc + 7;
    long *v = malloc(n * sizeof *v); //@ root=heap_buffer_overflow
    long sum = 0;

    (void)argv;
    for (int i = 0; i < n; i++)
        v[i] = (long)i * i;
    for (int i = 0; i <= n; i++)
        sum += v[i]; //@ bug=heap_buffer_overflow
    printf("sum %ld\n", sum);
    free(v);
    return 0;
}
