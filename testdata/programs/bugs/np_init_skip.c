/* np_init_skip.c: NULL dereference of a struct field that the constructor
   left NULL (the shape of CPython's _pickle.c bug: a wrongly initialised
   pickler whose write buffer is NULL).

   pickler_new() allocates the output buffer only for a positive capacity;
   for capacity 0 it stores NULL into p->buf (the root). write_byte(),
   called later through emit(), stores into p->buf[p->len] (the symptom;
   len is 0, so the fault address is 0).

   Output: "p1 len 3 'abc'", then SIGSEGV at the first write through p2. */
// expect: null_pointer_deref
// memcheck: yes
// native: SIGSEGV
#include <stdio.h>
#include <stdlib.h>

struct pickler {
    char *buf;
    size_t len;
    size_t cap;
};

/* A call right after the root's store keeps gcc from merging it with the
   other branch's store of p->buf (it would then sit on the if's lines). */
__attribute__((noinline)) static void note_unbuffered(const struct pickler *p)
{
    fprintf(stderr, "unbuffered pickler, cap %zu\n", p->cap);
}

__attribute__((noinline)) static struct pickler *pickler_new(size_t cap)
{
    struct pickler *p = malloc(sizeof *p);
    p->len = 0;
    p->cap = cap;
    if (cap > 0) {
        p->buf = malloc(cap);
    } else {
        p->buf = NULL; //@ root=null_pointer_deref
        note_unbuffered(p);
    }
    return p;
}

__attribute__((noinline)) static void write_byte(struct pickler *p, char c)
{
    p->buf[p->len] = c; //@ bug=null_pointer_deref
    p->len++;
}

__attribute__((noinline)) static void emit(struct pickler *p, const char *s)
{
    while (*s != '\0')
        write_byte(p, *s++);
}

int main(void)
{
    struct pickler *p1 = pickler_new(16);
    struct pickler *p2 = pickler_new(0);

    emit(p1, "abc");
    printf("p1 len %zu '%.*s'\n", p1->len, (int)p1->len, p1->buf);
    fflush(stdout);
    emit(p2, "xyz");
    printf("p2 len %zu\n", p2->len);
    free(p1->buf);
    free(p1);
    free(p2->buf);
    free(p2);
    return 0;
}
