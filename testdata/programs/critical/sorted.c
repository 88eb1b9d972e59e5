/* sorted.c: a spec violation, the fifth case study. Inserts the keys
   5 2 8 1 9 into a sorted singly linked list of malloc'd
   `struct snode { int key; struct snode *next; }`, with
   MGTRACE_CPOINT("snode") after each insert. The insert's walk (line
   marked FAULT) compares with `key - 1` where it should compare with
   `key`, so 9 stops before 8: after the fifth insert the list is
   1 2 5 9 8 and sorted.spec is violated. Prints `1 2 5 9 8`, exit 0.
   Inverting the walk's comparison with 8 (the FAULT line's last
   execution that stopped the walk) lets 9 go after 8: `1 2 5 8 9` and no
   violation. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

struct snode {
	int key;
	struct snode *next;
};

__attribute__((noipa)) static void insert(struct snode **head, int key)
{
	struct snode **link = head, *n = malloc(sizeof *n);
	if (n == NULL)
		exit(2);
	while (*link != NULL && (*link)->key < key - 1) /* FAULT: should be < key */
		link = &(*link)->next;
	n->key = key;
	n->next = *link;
	*link = n;
	MGTRACE_CPOINT("snode");
}

int main(void)
{
	static const int keys[] = {5, 2, 8, 1, 9};
	struct snode *head = NULL;
	for (int i = 0; i < 5; i++)
		insert(&head, keys[i]);
	for (struct snode *n = head; n != NULL; n = n->next)
		printf("%d%s", n->key, n->next != NULL ? " " : "\n");
	return 0;
}
