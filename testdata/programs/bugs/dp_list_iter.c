/* dp_list_iter.c: dangling read through an iterator that a removal left
   pointing at a freed list node.

   An iterator (a struct holding the current node) is positioned on node 2
   of a 4-node list. list_remove(), called in between, unlinks node 2 and
   frees it (the root). iter_next() later reads it->cur->next (the
   symptom): the node's address reached the iterator through the list's
   next field, a local of iter_seek and the iterator's field.

   Output: "at 2", "removed 2", "next 3" (natively the freed node's next
   field, at offset 16, survives the free: glibc's tcache reuses only the
   first two words). */
// expect: dangling_pointer_deref
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>

struct node {
    long val;
    long pad;
    struct node *next;
};

struct iter {
    struct node *cur;
};

__attribute__((noinline)) static struct node *list_build(int n)
{
    struct node *head = NULL;
    for (int i = n; i >= 1; i--) {
        struct node *nd = malloc(sizeof *nd);
        nd->val = i;
        nd->pad = 0;
        nd->next = head;
        head = nd;
    }
    return head;
}

__attribute__((noinline)) static void iter_seek(struct iter *it, struct node *head, long val)
{
    struct node *n = head;
    while (n != NULL && n->val != val)
        n = n->next;
    it->cur = n;
}

__attribute__((noinline)) static void list_remove(struct node **head, long val)
{
    for (struct node **pp = head; *pp != NULL; pp = &(*pp)->next) {
        struct node *n = *pp;
        if (n->val == val) {
            *pp = n->next;
            free(n); //@ root=dangling_pointer_deref
            return;
        }
    }
}

__attribute__((noinline)) static long iter_next(struct iter *it)
{
    struct node *next = it->cur->next; //@ bug=dangling_pointer_deref
    it->cur = next;
    return next != NULL ? next->val : -1;
}

__attribute__((noinline)) static void list_free(struct node *n)
{
    while (n != NULL) {
        struct node *next = n->next;
        free(n);
        n = next;
    }
}

int main(void)
{
    struct node *head = list_build(4);
    struct iter it;

    iter_seek(&it, head, 2);
    printf("at %ld\n", it.cur->val);
    list_remove(&head, 2);
    printf("removed 2\n");
    printf("next %ld\n", iter_next(&it));
    list_free(head);
    return 0;
}
