/* ho_posix_memalign.c: heap buffer overflow of a block from
   posix_memalign, whose pointer comes back through its first argument.

   ring_new() asks posix_memalign for a 64-byte aligned buffer of 100
   bytes (the root: the allocation) and returns it; ring_fill(), called
   later from main, writes 104 bytes into it: the last 4 land past the
   end (the symptom).

   Output: "filled 104". */
// expect: heap_buffer_overflow
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned char *ring_new(void)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, 100) != 0) //@ root=heap_buffer_overflow
        return NULL;
    return p;
}

__attribute__((noinline)) static int ring_fill(unsigned char *r, int n)
{
    int i;
    for (i = 0; i < n; i++)
        r[i] = (unsigned char)i; //@ bug=heap_buffer_overflow
    return i;
}

int main(void)
{
    unsigned char *r = ring_new();
    if (r == NULL)
        return 1;
    printf("filled %d\n", ring_fill(r, 104));
    free(r);
    return 0;
}
