/* list.c: a singly linked list, built, printed, walked and freed.

   Exercises: malloc'd nodes linked through pointer fields (the basic shape
   of a memory graph), stores of heap pointers into heap objects, loads
   through them (list_sum follows node->next), free.

   Usage: list [N]   N nodes (default 10, at most 1000000).

   Output (stdout), one line per node in list order, then a summary:
       node 0x5581e4a4a2a0 val 0 next 0x5581e4a4a2c0
       ...
       node 0x5581e4a4a3e0 val 9 next (nil)
       length 10 sum 45
   Node i (from 0) holds val i; each node's next is the following node's
   address, and the last node's next is NULL, which glibc's %p prints as
   "(nil)". The sum is N*(N-1)/2. Exit status 0.

   A test should assert: N node lines; next of line i equals the address
   of line i+1; "(nil)" last; the summary. In a trace of this program: N
   mallocs of 16 bytes returning the printed addresses, a store of each
   next pointer into the preceding node (at its address + 8), and N frees
   of the same addresses. The memory graph just before list_free has N
   nodes in one chain.

   The functions are noinline so that calls and returns stay visible at
   every optimisation level. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    long val;
    struct node *next;
};

/* list_append allocates a node holding val and links it after *tail
   (or makes it the head when the list is empty). Returns the new node. */
__attribute__((noinline)) static struct node *
list_append(struct node **head, struct node *tail, long val)
{
    struct node *n = malloc(sizeof *n);

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->val = val;
    n->next = NULL;
    if (tail == NULL)
        *head = n;
    else
        tail->next = n;
    return n;
}

/* list_sum walks the list and returns the sum of its values; *length
   receives the number of nodes. */
__attribute__((noinline)) static long
list_sum(const struct node *head, long *length)
{
    long sum = 0, len = 0;
    const struct node *n;

    for (n = head; n != NULL; n = n->next) {
        sum += n->val;
        len++;
    }
    *length = len;
    return sum;
}

/* list_free frees every node. */
__attribute__((noinline)) static void
list_free(struct node *head)
{
    while (head != NULL) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
}

int
main(int argc, char **argv)
{
    long n = 10, i, length, sum;
    struct node *head = NULL, *tail = NULL;
    const struct node *p;

    if (argc > 1) {
        n = strtol(argv[1], NULL, 10);
        if (n < 0 || n > 1000000) {
            fprintf(stderr, "usage: list [N], 0 <= N <= 1000000\n");
            return 2;
        }
    }

    for (i = 0; i < n; i++)
        tail = list_append(&head, tail, i);

    for (p = head; p != NULL; p = p->next)
        printf("node %p val %ld next %p\n", (void *)p, p->val, (void *)p->next);

    sum = list_sum(head, &length);
    printf("length %ld sum %ld\n", length, sum);

    list_free(head);
    return 0;
}
