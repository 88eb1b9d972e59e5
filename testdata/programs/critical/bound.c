/* bound.c [N]: a wrong loop bound, the first case study of the critical
   predicate search. fill() writes N+1 longs into a record's array of 8
   (N defaults to 8): the loop's `i <= n` (line marked FAULT) lets i == 8
   through, and vals[8] overwrites the pointer `out` that follows the
   array with 8. main then stores through out: SIGSEGV at the line marked
   CRASH. Prints `filled` first.
   Inverting the bound check's execution that let i == 8 through (or any
   earlier one, or the guard that enters the loop) ends the loop in time:
   the run prints `total 28` and exits 0. */
#include <stdio.h>
#include <stdlib.h>

struct rec {
	long vals[8];
	long *out;
};

__attribute__((noipa)) static void fill(struct rec *r, int n)
{
	for (int i = 0; i <= n; i++) /* FAULT: should be i < n */
		r->vals[i] = i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	long total = 0;
	struct rec *r = malloc(sizeof *r);
	if (r == NULL)
		return 2;
	r->out = &total;
	fill(r, n);
	printf("filled\n");
	fflush(stdout);
	for (int i = 0; i < 8; i++)
		*r->out += r->vals[i]; /* CRASH */
	printf("total %ld\n", total);
	free(r);
	return 0;
}
