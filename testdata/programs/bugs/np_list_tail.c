/* np_list_tail.c: NULL dereference of a list's terminating next field,
   read two functions after it was stored.

   list_build() makes a 3-node list; each new node's next is set to NULL
   (`n->next = NULL;`, the root: the last node keeps that NULL) before it
   is linked after the previous one. get_nth() walks n next-fields and
   returns what it reaches; print_nth(), asked for node 3 of 3 (an
   off-by-one: nodes are numbered from 0), dereferences the NULL it got
   (`p->val`, the symptom; val is at offset 0, so the fault address is
   0).

   Output: "node 0 = 10", "node 2 = 30", then SIGSEGV. */
// expect: null_pointer_deref
// memcheck: yes
// native: SIGSEGV
#include <stdio.h>
#include <stdlib.h>

struct node {
    int val;
    struct node *next;
};

__attribute__((noinline)) static struct node *list_build(int count)
{
    struct node *head = NULL, *last = NULL;
    for (int i = 1; i <= count; i++) {
        struct node *n = malloc(sizeof *n);
        n->val = i * 10;
        n->next = NULL; //@ root=null_pointer_deref
        if (last != NULL)
            last->next = n;
        else
            head = n;
        last = n;
    }
    return head;
}

__attribute__((noinline)) static struct node *get_nth(struct node *p, int n)
{
    while (n-- > 0)
        p = p->next;
    return p;
}

__attribute__((noinline)) static void print_nth(struct node *head, int n)
{
    struct node *p = get_nth(head, n);
    printf("node %d = %d\n", n, p->val); //@ bug=null_pointer_deref
    fflush(stdout);
}

int main(void)
{
    struct node *head = list_build(3);
    print_nth(head, 0);
    print_nth(head, 2);
    print_nth(head, 3);
    while (head != NULL) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    return 0;
}
