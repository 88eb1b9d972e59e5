/* overflow.c: a heap buffer overflow into the neighbouring block, which
   the program survives: it exits 0 with its neighbour's data silently
   changed.

   Exercises: stores through a pointer to one heap block (the base register
   holds that block's address) that land past its end and inside the next
   block, the pattern MG++ reports as a heap overflow. The overflowing
   store is on the line marked OVERFLOW.

   Two blocks of 4 longs (32 bytes) are allocated one after the other; the
   block at the lower address is `victim`'s neighbour `buf`. fill() is
   asked to write too many longs into buf: as many as reach from buf's
   start through the first two longs of the neighbour. (The count is
   computed from the blocks' addresses, so the overflow reaches the
   neighbour whatever gap the allocator leaves between them; with glibc's
   malloc, natively and under Valgrind tools that keep it, the gap is 16
   bytes of chunk header and fill writes 8 longs.)

   The overflow also overwrites the allocator's header of the neighbour,
   so the two blocks are deliberately not freed: free() would notice the
   damaged header and abort, and this program is the quiet kind of bug.

   Usage: overflow   (no arguments)

   Output (stdout); addresses change from run to run, the rest does not:
       overflow
       buf 0x55b485bd42b0 len 32
       victim 0x55b485bd42e0 len 32
       victim before 100 101 102 103
       fill 8 longs
       victim after 6 7 102 103
   "fill N longs": N = (victim - buf) / 8 + 2, the number of longs written
   (8 with glibc). victim's first two longs now hold the values fill wrote
   there (N-2 and N-1); the other two are untouched. Exit status 0.

   A test should assert these lines and that victim after = N-2, N-1, 102,
   103. In a trace: 8-byte stores from the line marked OVERFLOW (tests
   find it by searching this file for the marker comment) to buf,
   buf+8, ..., the last two at victim and victim+8, all with the base
   register holding buf (plus the index); no free of either block. */
#include <stdio.h>
#include <stdlib.h>

#define LEN 4 /* longs per block */

/* fill stores 0, 1, ..., n-1 into dst[0..n-1]. It trusts n. */
__attribute__((noinline)) static void
fill(long *dst, long n)
{
    long i;

    for (i = 0; i < n; i++)
        dst[i] = i; /* OVERFLOW */
}

int
main(void)
{
    long *a, *b, *buf, *victim, n, i;

    /* Print first, so that stdout's buffer is allocated before a and b
       (it would otherwise land wherever the first printf runs). */
    printf("overflow\n");

    a = malloc(LEN * sizeof *a);
    b = malloc(LEN * sizeof *b);
    if (a == NULL || b == NULL) {
        perror("malloc");
        return 1;
    }
    /* The block at the lower address overflows into the higher one. */
    buf = a < b ? a : b;
    victim = a < b ? b : a;
    printf("buf %p len %zu\n", (void *)buf, LEN * sizeof *buf);
    printf("victim %p len %zu\n", (void *)victim, LEN * sizeof *victim);

    for (i = 0; i < LEN; i++)
        victim[i] = 100 + i;
    printf("victim before %ld %ld %ld %ld\n", victim[0], victim[1], victim[2], victim[3]);

    /* The bug: the count should be LEN. This one runs through the
       neighbour's first two longs. */
    n = (long)((char *)victim - (char *)buf) / (long)sizeof(long) + 2;
    printf("fill %ld longs\n", n);
    fill(buf, n);

    printf("victim after %ld %ld %ld %ld\n", victim[0], victim[1], victim[2], victim[3]);
    return 0;
}
