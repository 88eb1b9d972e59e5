/* jobs.c: the README's quick-start program (README.md, "Quick start on your
 * own program"). A doubly linked queue of jobs; insert_after links the new
 * job in before it fixes the next job's back pointer, through a pointer it
 * has just changed: the new job's prev points at itself, the next job's
 * prev still at the job before, and walking the queue backwards skips the
 * new job. */
#include <stdio.h>
#include <stdlib.h>

struct job {
	int id;
	struct job *next;
	struct job *prev;
};

static struct job *head, *tail;

static struct job *new_job(int id)
{
	struct job *j = malloc(sizeof *j);
	if (j == NULL)
		exit(1);
	j->id = id;
	j->next = j->prev = NULL;
	return j;
}

static void push(int id)
{
	struct job *j = new_job(id);
	j->prev = tail;
	if (tail != NULL)
		tail->next = j;
	else
		head = j;
	tail = j;
}

static void insert_after(struct job *at, int id)
{
	struct job *j = new_job(id);
	j->prev = at;
	j->next = at->next;
	at->next = j;
	if (j->next != NULL)
		at->next->prev = j; /* BUG: at->next is j by now; should be j->next->prev */
	else
		tail = j;
}

int main(void)
{
	for (int id = 1; id <= 4; id++)
		push(id);
	insert_after(head->next, 42);
	printf("forward: ");
	for (struct job *j = head; j != NULL; j = j->next)
		printf(" %d", j->id);
	printf("\nbackward:");
	int n = 0;
	for (struct job *j = tail; j != NULL && n < 10; j = j->prev, n++)
		printf(" %d", j->id);
	printf("\n");
	return 0;
}
