/* nullcheck.c [KEY]: a missing NULL check, the second case study. A
   table of three named entries; lookup(KEY) (default "delta", which is
   not in the table) walks the chain and returns NULL when no key matches,
   and main dereferences the result without a check (line marked CRASH):
   SIGSEGV. The line marked FAULT is the predicate that decided the
   lookup's outcome: inverting its last execution (the comparison with
   "gamma") makes lookup return that entry, and the run prints `value 3`
   and exits 0. With a key in the table (alpha, beta, gamma) it prints its
   value and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	const char *key;
	long value;
	struct entry *next;
};

static struct entry *table;

__attribute__((noipa)) static void add(const char *key, long value)
{
	struct entry *e = malloc(sizeof *e);
	if (e == NULL)
		exit(2);
	e->key = key;
	e->value = value;
	e->next = table;
	table = e;
}

__attribute__((noipa)) static struct entry *lookup(const char *key)
{
	for (struct entry *e = table; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0) /* FAULT: the lookup may fail */
			return e;
	return NULL;
}

int main(int argc, char **argv)
{
	add("gamma", 3);
	add("beta", 2);
	add("alpha", 1);
	const char *want = argc > 1 ? argv[1] : "delta";
	struct entry *e = lookup(want);
	printf("value %ld\n", e->value); /* CRASH: no NULL check */
	return 0;
}
