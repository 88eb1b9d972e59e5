/* ho_loop_bound.c: heap buffer overflow from a copy-pasted loop bound (the
   shape of bc 1.06's storage.c bug: a loop over the arrays table bounded
   by the variables' count writes NULLs past its end).

   more_arrays() allocates s->arrays for a_count pointers (the root);
   more_variables() allocates s->vars for v_count. clear_arrays(), called
   later, NULLs arrays[0 .. v_count) (the symptom: v_count is 6 and
   a_count 4, so two stores land past the 32-byte block). Natively the
   second overflowing store zeroes the size field of the next chunk
   (s->vars), and glibc aborts when that block is freed.

   Output: "arrays 4 vars 6", "cleared", then glibc aborts ("free():
   invalid size" or similar). */
// expect: heap_buffer_overflow
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>

struct storage {
    long **arrays;
    int a_count;
    long **vars;
    int v_count;
};

__attribute__((noinline)) static void more_arrays(struct storage *s, int n)
{
    s->arrays = malloc(n * sizeof *s->arrays); //@ root=heap_buffer_overflow
    s->a_count = n;
}

__attribute__((noinline)) static void more_variables(struct storage *s, int n)
{
    s->vars = malloc(n * sizeof *s->vars);
    s->v_count = n;
    for (int i = 0; i < n; i++)
        s->vars[i] = NULL;
}

__attribute__((noinline)) static void clear_arrays(struct storage *s)
{
    for (int i = 0; i < s->v_count; i++) /* should be s->a_count */
        s->arrays[i] = NULL; //@ bug=heap_buffer_overflow
}

int main(void)
{
    struct storage s;

    more_arrays(&s, 4);
    more_variables(&s, 6);
    printf("arrays %d vars %d\n", s.a_count, s.v_count);
    clear_arrays(&s);
    printf("cleared\n");
    fflush(stdout);
    free(s.vars);
    free(s.arrays);
    return 0;
}
