/* ho_underflow_write.c: heap buffer under-write through a cursor kept in a
   struct: a backspace that does not stop at the start of the buffer.

   gb_init() allocates the buffer (the root) and sets the cursor g->cur to
   its start. gb_backspace() decrements the cursor without checking it
   against the base; after three backspaces over two characters the
   cursor is one byte before the block, and gb_put() stores through it
   (the symptom). Natively that byte is the top byte of glibc's chunk
   size field, and free() aborts.

   Output: "text len 2 'ab'", "after backspaces len 0 ''", then glibc
   aborts at free ("double free or corruption (out)"). */
// expect: heap_buffer_overflow
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>

struct gapbuf {
    char *base;
    char *cur;
    size_t cap;
};

__attribute__((noinline)) static void gb_init(struct gapbuf *g, size_t cap)
{
    g->base = malloc(cap); //@ root=heap_buffer_overflow
    g->cur = g->base;
    g->cap = cap;
}

__attribute__((noinline)) static void gb_put(struct gapbuf *g, char c)
{
    *g->cur = c; //@ bug=heap_buffer_overflow
    g->cur++;
}

__attribute__((noinline)) static void gb_backspace(struct gapbuf *g)
{
    g->cur--; /* no check against g->base */
}

__attribute__((noinline)) static void gb_show(const char *what, const struct gapbuf *g)
{
    long len = g->cur - g->base;
    printf("%s len %ld '%.*s'\n", what, len, len > 0 ? (int)len : 0, g->base);
}

int main(void)
{
    struct gapbuf g;

    gb_init(&g, 16);
    gb_put(&g, 'a');
    gb_put(&g, 'b');
    gb_show("text", &g);
    gb_backspace(&g);
    gb_backspace(&g);
    gb_backspace(&g);
    gb_put(&g, 'x');
    gb_show("after backspaces", &g);
    fflush(stdout);
    free(g.base);
    return 0;
}
