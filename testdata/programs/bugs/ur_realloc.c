/* ur_realloc.c: the uninitialised tail of a block grown by realloc
   decides a branch in another function.

   vec_push() grows the vector with realloc when it is full (the root:
   the realloc that grew it from 4 to 8 ints leaves the 4 new slots
   uninitialised), and stores the element. After 5 pushes vec_max(),
   called later, scans up to the capacity instead of the length and
   compares v->data[5] (the symptom, the first slot nobody wrote) with the
   current maximum. Natively realloc grows the block in place into glibc's
   top chunk, so the new slots hold stale allocator words: data[6] is the
   old size field of the top chunk (glibc wrote it, the program never
   did).

   Output: "len 5 cap 8", "max M": M is 9 or a stale word (134481 with
   Debian 12's glibc; the same on every run). */
// expect: uninitialized_read
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

struct vec {
    int *data;
    int len;
    int cap;
};

static int updates;

__attribute__((noinline)) static void vec_push(struct vec *v, int x)
{
    if (v->len == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 4;
        v->data = realloc(v->data, v->cap * sizeof *v->data); //@ root=uninitialized_read
    }
    v->data[v->len++] = x;
}

__attribute__((noinline)) static int vec_max(const struct vec *v)
{
    int m = v->data[0];
    for (int i = 1; i < v->cap; i++) { /* should be v->len */
        if (v->data[i] > m) { //@ bug=uninitialized_read
            m = v->data[i];
            updates++;
        }
    }
    return m;
}

int main(void)
{
    static const int xs[5] = {3, 9, 4, 1, 7};
    struct vec v = {NULL, 0, 0};

    for (int i = 0; i < 5; i++)
        vec_push(&v, xs[i]);
    printf("len %d cap %d\n", v.len, v.cap);
    printf("max %d\n", vec_max(&v));
    free(v.data);
    return 0;
}
