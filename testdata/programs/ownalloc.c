/* ownalloc.c: blocks from the program's own allocators, for the tests of
   `T ALLOC f RETURNS [n];` and `T FREE g;` (locate/pool_test.go).

   item_get hands out struct item slots of one malloc'd arena, chained in
   a free list; item_put gives one back. raw_get bumps through a 128-byte
   malloc'd slab in 32-byte steps and has no free: resetting the bump
   index makes it hand out a slot again.

   The C-points (MGTRACE_CPOINT) and what is live there:
     p1  items a, b (a -> b)                   2 items
     p2  item_put(b): a                        1 item
     p3  raw x, y                              1 item, 2 raws
     p4  raw z at x's address (x ends), y      1 item, 2 raws
     p5  the arena freed: its items end        0 items, 2 raws
   Output: "ok" on stdout; exit status 0. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

struct item {
	long key;
	struct item *next;
};

static struct item *arena, *free_items;
static char *slab;
static int slab_next;

__attribute__((noinline)) struct item *item_get(void)
{
	struct item *p = free_items;

	if (p == NULL)
		exit(1);
	free_items = p->next;
	return p;
}

__attribute__((noinline)) void item_put(struct item *p)
{
	p->next = free_items;
	free_items = p;
}

__attribute__((noinline)) void *raw_get(void)
{
	return slab + 32 * slab_next++;
}

int main(void)
{
	struct item *a, *b;
	long *x, *y, *z;
	int i;

	arena = malloc(8 * sizeof(struct item));
	if (arena == NULL)
		return 1;
	for (i = 7; i >= 0; i--) {
		arena[i].next = free_items;
		free_items = &arena[i];
	}
	a = item_get();
	b = item_get();
	a->key = 1;
	b->key = 2;
	b->next = NULL;
	a->next = b;
	MGTRACE_CPOINT("p1");
	a->next = NULL;
	item_put(b);
	MGTRACE_CPOINT("p2");

	slab = malloc(128);
	if (slab == NULL)
		return 1;
	x = raw_get();
	y = raw_get();
	x[0] = 1, x[1] = 2, x[2] = 3;
	y[0] = 4, y[1] = 5, y[2] = 6;
	MGTRACE_CPOINT("p3");
	slab_next = 0;
	z = raw_get();
	z[0] = 7, z[1] = 8, z[2] = 9;
	MGTRACE_CPOINT("p4");
	free(arena);
	MGTRACE_CPOINT("p5");
	printf("ok\n");
	return 0;
}
