/* ok_list.c: correct program: a linked list built, searched, edited and
   freed (the shapes of dp_list_iter.c and np_list_tail.c, done right).

   Nodes are pushed, one is removed (unlinked, then freed; no pointer to
   it survives), the list is walked to its NULL end with the NULL
   checked, and every node is freed with the next pointer read before
   the free.

   Output: "list 5 4 3 2 1", "removed 3", "list 5 4 2 1", "sum 12". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>

struct node {
    long val;
    struct node *next;
};

__attribute__((noinline)) static struct node *push(struct node *head, long v)
{
    struct node *n = malloc(sizeof *n);
    n->val = v;
    n->next = head;
    return n;
}

__attribute__((noinline)) static struct node *remove_val(struct node *head, long v)
{
    struct node **pp = &head;
    while (*pp != NULL && (*pp)->val != v)
        pp = &(*pp)->next;
    if (*pp != NULL) {
        struct node *dead = *pp;
        *pp = dead->next;
        free(dead);
    }
    return head;
}

__attribute__((noinline)) static long show(const struct node *n)
{
    long sum = 0;
    printf("list");
    for (; n != NULL; n = n->next) {
        printf(" %ld", n->val);
        sum += n->val;
    }
    printf("\n");
    return sum;
}

int main(void)
{
    struct node *head = NULL;
    long sum;

    for (long v = 1; v <= 5; v++)
        head = push(head, v);
    show(head);
    head = remove_val(head, 3);
    printf("removed 3\n");
    sum = show(head);
    printf("sum %ld\n", sum);
    while (head != NULL) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    return 0;
}
