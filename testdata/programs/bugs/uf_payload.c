/* uf_payload.c: unmatched free of a pointer to the payload of a
   header-prefixed allocation.

   blk_alloc() mallocs a 16-byte header plus the payload and returns the
   payload's address (`return h + 1;`, the root: pointer arithmetic).
   Blocks from blk_alloc must go back through blk_free(), which steps back
   to the header. item_destroy() does that for the label but frees the
   counts array, also from blk_alloc, with plain free() (the symptom): a
   pointer 16 bytes into the malloc'd block. The pointer is copied through
   blk_alloc's return value, item_new's struct field it->counts and a load
   in item_destroy.

   Output: "label tally counts 0 1 4 9 16 sum 30", then glibc aborts on the
   bad free. */
// expect: unmatched_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct blk_hdr {
    size_t size;
    size_t magic;
};

struct item {
    char *label;
    int *counts;
    int n;
};

__attribute__((noinline)) static void *blk_alloc(size_t n)
{
    struct blk_hdr *h = malloc(sizeof *h + n);
    h->size = n;
    h->magic = 0xb10c0;
    return h + 1; //@ root=unmatched_free
}

__attribute__((noinline)) static void blk_free(void *p)
{
    struct blk_hdr *h = (struct blk_hdr *)p - 1;
    free(h);
}

__attribute__((noinline)) static struct item *item_new(const char *label, int n)
{
    struct item *it = malloc(sizeof *it);
    it->label = blk_alloc(strlen(label) + 1);
    strcpy(it->label, label);
    it->counts = blk_alloc(n * sizeof *it->counts);
    it->n = n;
    for (int i = 0; i < n; i++)
        it->counts[i] = i * i;
    return it;
}

__attribute__((noinline)) static void item_destroy(struct item *it)
{
    blk_free(it->label);
    free(it->counts); //@ bug=unmatched_free
    free(it);
}

int main(void)
{
    struct item *it = item_new("tally", 5);
    int sum = 0;
    printf("label %s counts", it->label);
    for (int i = 0; i < it->n; i++) {
        printf(" %d", it->counts[i]);
        sum += it->counts[i];
    }
    printf(" sum %d\n", sum);
    fflush(stdout);
    item_destroy(it);
    return 0;
}
