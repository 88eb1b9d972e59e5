/* ok_calloc.c: correct program: a calloc'd histogram read before most of
   its counters were ever stored (calloc's zeroes are initialised values;
   the shape of ur_branch.c and ho_neighbour.c, done right).

   Every bucket index is reduced modulo the real bucket count, and every
   counter, touched or not, decides a branch.

   Output: "buckets 1:1 5:1 12:2 15:1", "empty 12". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>

struct hist {
    int *counts;
    unsigned n;
};

__attribute__((noinline)) static void hist_add(struct hist *h, unsigned key)
{
    h->counts[key % h->n]++;
}

int main(void)
{
    static const unsigned keys[5] = {1, 5, 28, 31, 300};
    struct hist h;
    int empty = 0;

    h.n = 16;
    h.counts = calloc(h.n, sizeof *h.counts);
    for (int i = 0; i < 5; i++)
        hist_add(&h, keys[i]);
    printf("buckets");
    for (unsigned b = 0; b < h.n; b++) {
        if (h.counts[b] != 0)
            printf(" %u:%d", b, h.counts[b]);
        else
            empty++;
    }
    printf("\nempty %d\n", empty);
    free(h.counts);
    return 0;
}
