/* dl_realloc_fail.c: definite leak through `p = realloc(p, n)`: when
   realloc fails it returns NULL, the assignment overwrites the only
   pointer to the block, and the block (which realloc left alone) leaks.

   buf_new() allocates the buffer (the root and the symptom: the
   allocation of the block that leaks). buf_reserve() grows it with
   `b->data = realloc(b->data, n)`; asked for 1 TiB, realloc fails and
   b->data becomes NULL. buf_free() frees b->data, which is NULL by then.

   Output: "reserve 16: ok" (no growth needed), "reserve 1 TiB: failed",
   "data (nil)". */
// expect: definite_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
    char *data;
    size_t cap;
};

__attribute__((noinline)) static void buf_new(struct buf *b, size_t cap)
{
    b->data = malloc(cap); //@ bug=definite_leak root=definite_leak
    b->cap = cap;
    memset(b->data, 0, cap);
}

__attribute__((noinline)) static int buf_reserve(struct buf *b, size_t n)
{
    if (n <= b->cap)
        return 0;
    b->data = realloc(b->data, n); /* loses the block when realloc fails */
    if (b->data == NULL)
        return -1;
    b->cap = n;
    return 0;
}

__attribute__((noinline)) static void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
}

int main(void)
{
    struct buf b;

    buf_new(&b, 32);
    printf("reserve 16: %s\n", buf_reserve(&b, 16) == 0 ? "ok" : "failed");
    printf("reserve 1 TiB: %s\n", buf_reserve(&b, (size_t)1 << 40) == 0 ? "ok" : "failed");
    printf("data %p\n", (void *)b.data);
    buf_free(&b);
    return 0;
}
