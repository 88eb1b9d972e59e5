/* cpoint.c: a sorted linked list that marks its consistency points with
   include/mgtrace.h.

   This is also the example of how a program uses the client header: a
   C-point goes where an operation on the structure has finished and the
   structure must be whole again (after an insert, after a removal), never
   inside the operation, where a node may be half linked.

   Exercises: MGTRACE_CPOINT("list") after each insert, MGTRACE_CPOINT_AT
   ("list", head) after each removal, MGTRACE_MARK("phase-2") between the
   two phases; client requests that are no-ops when the program runs
   natively or under a Valgrind tool that does not handle them.

   Phase 1 inserts the keys 5 2 8 1 9 3 into an (initially empty) list kept
   in ascending order, one C-point after each insert. Then the marker.
   Phase 2 removes the keys 2 and 8, one C-point after each removal.

   Usage: cpoint   (no arguments)

   Output (stdout); no addresses, so it is the same natively and under any
   Valgrind tool:
       phase 1: 1 2 3 5 8 9
       phase 2: 1 3 5 9
       cpoints 8 marks 1
   Exit status 0.

   A test should assert the lines above. In a trace: 8 CLIENT_REQUEST
   events of code CPOINT named "list" (6 before the MARK, 2 after; the
   last two carry the list head as args[1]), one MARK named "phase-2"; at
   every C-point the list reachable from the head is sorted and acyclic. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

struct node {
    long val;
    struct node *next;
};

static int cpoints, marks;

/* list_insert links a new node holding val into the sorted list *head. */
__attribute__((noinline)) static void
list_insert(struct node **head, long val)
{
    struct node **link = head, *n = malloc(sizeof *n);

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    while (*link != NULL && (*link)->val < val)
        link = &(*link)->next;
    n->val = val;
    n->next = *link;
    *link = n;

    /* The insert is complete: the list must be sorted and acyclic again. */
    MGTRACE_CPOINT("list");
    cpoints++;
}

/* list_remove unlinks and frees the first node holding val, if any. */
__attribute__((noinline)) static void
list_remove(struct node **head, long val)
{
    struct node **link = head, *n;

    while (*link != NULL && (*link)->val != val)
        link = &(*link)->next;
    if (*link == NULL)
        return;
    n = *link;
    *link = n->next;
    free(n);

    /* Consistent again. This C-point names the list it is about. */
    MGTRACE_CPOINT_AT("list", *head);
    cpoints++;
}

static void
list_print(const char *label, const struct node *n)
{
    printf("%s:", label);
    for (; n != NULL; n = n->next)
        printf(" %ld", n->val);
    printf("\n");
}

int
main(void)
{
    static const long inserts[] = { 5, 2, 8, 1, 9, 3 };
    static const long removals[] = { 2, 8 };
    struct node *head = NULL, *next;
    size_t i;

    for (i = 0; i < sizeof inserts / sizeof inserts[0]; i++)
        list_insert(&head, inserts[i]);
    list_print("phase 1", head);

    MGTRACE_MARK("phase-2");
    marks++;

    for (i = 0; i < sizeof removals / sizeof removals[0]; i++)
        list_remove(&head, removals[i]);
    list_print("phase 2", head);

    printf("cpoints %d marks %d\n", cpoints, marks);

    for (; head != NULL; head = next) {
        next = head->next;
        free(head);
    }
    return 0;
}
