/* specsem.c: small heap shapes for the checker's semantics tests
   (locate/locate_test.go), one per mode.

   Usage: specsem MODE
     shard   an int array of 16 slots from make_shard(), sorted, then
             slot 9 overwritten with 0 (line marked SHARD-BREAK); the
             line marked SHARD-CHECK (in shard_check) runs before and after
             the break.
     cycle   a three-node binary tree (struct bnode) built in build_tree(),
             checked at check_point() ENTRY, then the last leaf's left
             pointer set to the root (CYCLE-BREAK): a cycle.
     wild    a two-node list (struct lnode) whose second next is then set
             to a non-NULL address that is no node (WILD-BREAK).
   Output: "ok MODE" on stdout. Exit status 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

struct bnode {
	int key;
	struct bnode *left, *right;
};

struct lnode {
	long value;
	struct lnode *next;
};

static int sink;
int *volatile g_shard; /* keeps the shard's stores alive under -O1 */

__attribute__((noinline)) static void check_point(void) { sink++; }

__attribute__((noinline)) static void shard_check(int *s) {
	sink += s[0]; /* SHARD-CHECK */
}

__attribute__((noinline)) static int *make_shard(int n) {
	return calloc((size_t)n, sizeof(int));
}

__attribute__((noinline)) static struct bnode *bnew(int key) {
	struct bnode *b = malloc(sizeof *b);
	b->key = key;
	b->left = b->right = NULL;
	return b;
}

__attribute__((noinline)) static struct bnode *build_tree(void) {
	struct bnode *r = bnew(2);
	r->left = bnew(1);
	r->right = bnew(3);
	return r;
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "shard";
	if (strcmp(mode, "shard") == 0) {
		int *s = make_shard(16);
		g_shard = s;
		for (int i = 0; i < 16; i++) {
			s[i] = 10 * i + 1;
		}
		shard_check(s);
		s[9] = 0; /* SHARD-BREAK */
		shard_check(s);
	} else if (strcmp(mode, "cycle") == 0) {
		struct bnode *r = build_tree();
		check_point();
		r->right->left = r; /* CYCLE-BREAK */
		check_point();
	} else if (strcmp(mode, "wild") == 0) {
		struct lnode *a = malloc(sizeof *a), *b = malloc(sizeof *b);
		a->value = 1;
		b->value = 2;
		a->next = b;
		b->next = NULL;
		MGTRACE_CPOINT("lnode");
		b->next = (struct lnode *)&sink; /* WILD-BREAK */
		MGTRACE_CPOINT("lnode");
	} else if (strncmp(mode, "expose-", 7) == 0) {
		/* (the modes after the original three: see the end of the file) */
		static struct lnode *volatile g_list, *volatile g_cursor;
		struct lnode *a = malloc(sizeof *a), *x = malloc(sizeof *x);
		g_list = a;
		g_cursor = malloc(sizeof *g_cursor);
		a->value = 1;
		x->value = 2;
		g_cursor->value = 0;
		a->next = x;
		x->next = NULL;
		g_cursor->next = x;
		MGTRACE_CPOINT("lnode");
		g_list->next = NULL; /* EXPOSE-UNLINK */
		MGTRACE_CPOINT("lnode");
		if (strcmp(mode, "expose-free") == 0) {
			free(g_cursor); /* EXPOSE-FREE */
		} else {
			g_cursor->next = NULL; /* EXPOSE-STORE */
		}
		MGTRACE_CPOINT("lnode");
	}
	printf("ok %s\n", mode);
	return 0;
}

/* More modes (described here so that the lines above keep their numbers,
   which recorded traces in testdata/traces refer to):
     expose-free, expose-store
             a list a -> x and a cursor node c -> x (value 0, held in a
             global); the list's link a->next is then cleared
             (EXPOSE-UNLINK): x is reached only through c, which the spec
             cannot tell from a list link. The correct free of c
             (EXPOSE-FREE), or the clearing of c's link (EXPOSE-STORE),
             then leaves x without a predecessor: the change that exposes
             the unlink. */
