/* offbyone.c [N]: an off-by-one guard, the third case study. push()
   refuses a push when the stack is full, but its guard (line marked FAULT)
   tests `top > CAP` where it should test `top >= CAP`, so the fifth push
   (N defaults to 5) writes items[4], one past the array, over the
   stack's `count` pointer, and the push's count update (line marked
   CRASH) stores through the pushed value: SIGSEGV. Inverting the guard's
   fifth execution refuses that push: the run prints `pushed 4 of 5` and
   exits 0. */
#include <stdio.h>
#include <stdlib.h>

#define CAP 4

struct stack {
	long items[CAP];
	long *count;
	int top;
};

__attribute__((noipa)) static int push(struct stack *s, long v)
{
	if (s->top > CAP) /* FAULT: should be s->top >= CAP */
		return -1;
	s->items[s->top++] = v;
	(*s->count)++; /* CRASH */
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	long pushed = 0;
	struct stack *s = calloc(1, sizeof *s);
	if (s == NULL)
		return 2;
	s->count = &pushed;
	for (int i = 0; i < n; i++)
		push(s, 1000 * i + 7);
	printf("pushed %ld of %d\n", pushed, n);
	free(s);
	return 0;
}
