/* uf_sbo.c: unmatched free of a stack address hidden in a small-buffer
   struct (a "small string optimisation" gone wrong).

   sbuf_init() points b->data either at a malloc'd block (large requests)
   or at the struct's own inline array (`b->data = b->inline_store;`, the
   root: the address is computed from the struct's, which lives on main's
   stack). sbuf_release(), called at the end from main, frees b->data
   without checking which (the symptom): for the small buffer that is a
   stack address.

   Output: "big 100 len 11 'hello world'", "small 32 len 3 'abc'", then
   glibc aborts ("free(): invalid pointer"). */
// expect: unmatched_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sbuf {
    char *data;
    size_t cap;
    size_t len;
    char inline_store[32];
};

__attribute__((noinline)) static void sbuf_init(struct sbuf *b, size_t want)
{
    if (want > sizeof b->inline_store) {
        b->data = malloc(want);
        b->cap = want;
    } else {
        b->data = b->inline_store; //@ root=unmatched_free
        b->cap = sizeof b->inline_store;
    }
    b->len = 0;
    b->data[0] = '\0';
}

__attribute__((noinline)) static void sbuf_append(struct sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap)
        n = b->cap - b->len - 1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

__attribute__((noinline)) static void sbuf_release(struct sbuf *b)
{
    free(b->data); //@ bug=unmatched_free
    b->data = NULL;
}

int main(void)
{
    struct sbuf big, small;
    sbuf_init(&big, 100);
    sbuf_init(&small, 16);
    sbuf_append(&big, "hello ");
    sbuf_append(&big, "world");
    sbuf_append(&small, "abc");
    printf("big %zu len %zu '%s'\n", big.cap, big.len, big.data);
    printf("small %zu len %zu '%s'\n", small.cap, small.len, small.data);
    fflush(stdout);
    sbuf_release(&big);
    sbuf_release(&small);
    return 0;
}
