/* ho_neighbour.c: heap buffer overflow that lands inside the neighbouring
   live block, so the address it writes is valid memory.

   hist_init() allocates 32 int counters (the root). bucket_of() still
   uses the modulus of an older, 1024-bucket version, so hist_add() for
   the key 300 increments counts[300] (the symptom): 1200 bytes from the
   start of a 128-byte block, inside the 4096-byte `names` block that main
   allocated right after it (natively 144 bytes after counts; under
   memcheck a little further, but still well before 1200). The write is a
   read-modify-write of an allocated, initialised int, so memcheck, which
   checks addresses and not which block a pointer came from, sees
   nothing; the pointer's base is counts, whose block ends at 128.

   Output: "buckets 1:1 5:1 17:1 31:1", "names intact no". */
// expect: heap_buffer_overflow
// memcheck: no (the address is inside another live, initialised block; memcheck checks addresses, not pointer provenance)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hist {
    int *counts;
    int nbuckets;
};

__attribute__((noinline)) static void hist_init(struct hist *h, int n)
{
    h->counts = calloc(n, sizeof *h->counts); //@ root=heap_buffer_overflow
    h->nbuckets = n;
}

__attribute__((noinline)) static unsigned bucket_of(unsigned key)
{
    return key % 1024; /* the old table size; should be % h->nbuckets */
}

__attribute__((noinline)) static void hist_add(struct hist *h, unsigned key)
{
    h->counts[bucket_of(key)]++; //@ bug=heap_buffer_overflow
}

int main(void)
{
    static const unsigned keys[5] = {1, 5, 17, 31, 300};
    struct hist h;
    char *names;
    int intact = 1;

    hist_init(&h, 32);
    names = malloc(4096);
    memset(names, 'n', 4096);
    for (int i = 0; i < 5; i++)
        hist_add(&h, keys[i]);
    printf("buckets");
    for (int b = 0; b < h.nbuckets; b++)
        if (h.counts[b] != 0)
            printf(" %d:%d", b, h.counts[b]);
    printf("\n");
    for (int i = 0; i < 4096; i++)
        if (names[i] != 'n')
            intact = 0;
    printf("names intact %s\n", intact ? "yes" : "no");
    free(names);
    free(h.counts);
    return 0;
}
