/* ok_interior.c: correct program: interior and one-past-the-end pointers
   used right (the shape of uf_payload.c and uf_interior.c, done right).

   blk_alloc() returns the payload of a header-prefixed block and
   blk_free() steps back to the header before freeing; a word is trimmed
   by keeping an offset, and the original pointer is freed; a loop walks
   an array with an end pointer one past its last element, which is
   compared but never dereferenced.

   Output: "label tally magic ok", "word 'hello'", "sum 15". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct blk_hdr {
    size_t size;
    size_t magic;
};

__attribute__((noinline)) static void *blk_alloc(size_t n)
{
    struct blk_hdr *h = malloc(sizeof *h + n);
    h->size = n;
    h->magic = 0xb10c0;
    return h + 1;
}

__attribute__((noinline)) static int blk_ok(const void *p)
{
    const struct blk_hdr *h = (const struct blk_hdr *)p - 1;
    return h->magic == 0xb10c0;
}

__attribute__((noinline)) static void blk_free(void *p)
{
    struct blk_hdr *h = (struct blk_hdr *)p - 1;
    free(h);
}

int main(void)
{
    char *label = blk_alloc(6);
    char *line = strdup("   hello");
    char *word = line + strspn(line, " ");
    int *v = malloc(5 * sizeof *v);
    int *end = v + 5;
    int sum = 0;

    strcpy(label, "tally");
    printf("label %s magic %s\n", label, blk_ok(label) ? "ok" : "bad");
    blk_free(label);
    printf("word '%s'\n", word);
    free(line);
    for (int i = 0; i < 5; i++)
        v[i] = i + 1;
    for (int *p = v; p != end; p++)
        sum += *p;
    printf("sum %d\n", sum);
    free(v);
    return 0;
}
