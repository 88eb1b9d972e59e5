/* dp_read.c: dangling pointer read, free and read in one function.

   main fills a record, frees it, and then reads its score again for the
   summary line (the read after free, the symptom; the free is the root).
   The record's score is at offset 16, past the two words glibc's tcache
   reuses, so natively the read still sees 42.

   Output: "before 42", "after 42" (natively). */
// expect: dangling_pointer_deref
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

struct rec {
    long id;
    long kind;
    long score;
};

__attribute__((noinline)) static struct rec *rec_new(long id, long score)
{
    struct rec *r = malloc(sizeof *r);
    r->id = id;
    r->kind = 1;
    r->score = score;
    return r;
}

__attribute__((noinline)) static void show(const char *when, long score)
{
    printf("%s %ld\n", when, score);
}

int main(void)
{
    struct rec *r = rec_new(7, 42);

    show("before", r->score);
    free(r); //@ root=dangling_pointer_deref
    show("after", r->score); //@ bug=dangling_pointer_deref
    return 0;
}
