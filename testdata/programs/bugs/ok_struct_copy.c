/* ok_struct_copy.c: correct program: structs with padding copied whole
   (`*dst = *src`, memcpy) although their padding bytes were never
   written. Copying uninitialised bytes is not a use: nothing branches on
   them, indexes with them or passes them to a system call (only the
   initialised fields are compared and printed). A checker that flags
   every read of an unwritten byte would report the copies.

   Output: "copy 7 x 2.5", "memcpy 7 x 2.5", "equal yes". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct padded {
    int id;     /* 4 bytes of padding follow */
    double val;
    char tag;   /* 7 bytes of padding follow */
};

__attribute__((noinline)) static void copy_one(struct padded *dst, const struct padded *src)
{
    *dst = *src;
}

int main(void)
{
    struct padded *a = malloc(sizeof *a);
    struct padded *b = malloc(sizeof *b);
    struct padded *c = malloc(sizeof *c);

    a->id = 7;
    a->val = 2.5;
    a->tag = 'x';
    copy_one(b, a);
    memcpy(c, b, sizeof *c);
    printf("copy %d %c %.1f\n", b->id, b->tag, b->val);
    printf("memcpy %d %c %.1f\n", c->id, c->tag, c->val);
    printf("equal %s\n", (a->id == c->id && a->val == c->val && a->tag == c->tag) ? "yes" : "no");
    free(a);
    free(b);
    free(c);
    return 0;
}
