/* ok_realloc.c: correct program: a vector grown with realloc (the shape
   of ur_realloc.c and df_realloc.c, done right).

   vec_push() doubles the capacity with realloc through a temporary (so a
   failure would not lose the block), only the len written elements are
   read, and only the final pointer is freed.

   Output: "len 100 cap 128", "sum 4950", "max 99". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>

struct vec {
    int *data;
    int len;
    int cap;
};

__attribute__((noinline)) static int vec_push(struct vec *v, int x)
{
    if (v->len == v->cap) {
        int cap = v->cap ? 2 * v->cap : 4;
        int *d = realloc(v->data, cap * sizeof *d);
        if (d == NULL)
            return -1;
        v->data = d;
        v->cap = cap;
    }
    v->data[v->len++] = x;
    return 0;
}

int main(void)
{
    struct vec v = {NULL, 0, 0};
    long sum = 0;
    int max;

    for (int i = 0; i < 100; i++)
        if (vec_push(&v, i) != 0)
            return 1;
    max = v.data[0];
    for (int i = 0; i < v.len; i++) {
        sum += v.data[i];
        if (v.data[i] > max)
            max = v.data[i];
    }
    printf("len %d cap %d\n", v.len, v.cap);
    printf("sum %ld\n", sum);
    printf("max %d\n", max);
    free(v.data);
    return 0;
}
