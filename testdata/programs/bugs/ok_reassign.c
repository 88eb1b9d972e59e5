/* ok_reassign.c: correct program: a pointer freed and then re-assigned a
   new block before it is used again (the shape of dp_read.c and
   dp_reused.c, done right), free(NULL), and a pointer set to NULL after
   its free and tested before use.

   Output: "first 1", "second 2", "cleared yes", "third 3". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>

struct rec {
    long id;
    long pad;
    long score;
};

static struct rec *current;

__attribute__((noinline)) static struct rec *rec_new(long id)
{
    struct rec *r = malloc(sizeof *r);
    r->id = id;
    r->pad = 0;
    r->score = 10 * id;
    return r;
}

__attribute__((noinline)) static void show(const char *what)
{
    if (current != NULL)
        printf("%s %ld\n", what, current->id);
    else
        printf("%s yes\n", what);
}

int main(void)
{
    struct rec *r = rec_new(1);
    current = r;
    show("first");
    free(r);
    r = rec_new(2);
    current = r;
    show("second");
    free(r);
    current = NULL;
    show("cleared");
    free(NULL);
    r = NULL;
    free(r);
    r = rec_new(3);
    current = r;
    show("third");
    current = NULL;
    free(r);
    return 0;
}
