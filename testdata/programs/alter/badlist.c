/* badlist.c: a list of 5 nodes is built, then a buggy "move to front"
   makes the list cyclic with the statement `p->next = q` (line 38). The
   program checks the list itself and aborts when it finds a cycle.
   Suppressing that statement leaves the list intact and the run ends
   normally. */
#include <stdio.h>
#include <stdlib.h>

struct node {
   int v;
   struct node* next;
};

static void check(struct node* l) {
   int n = 0;
   for (struct node* p = l; p != NULL; p = p->next) {
      if (++n > 100) {
         fprintf(stderr, "cycle\n");
         abort();
      }
   }
   printf("%d nodes\n", n);
}

int main(void) {
   struct node* l = NULL;
   for (int i = 0; i < 5; i++) {
      struct node* n = malloc(sizeof *n);
      n->v = i;
      n->next = l;
      l = n;
   }
   /* the last node should be moved to the front; the buggy code links the
      last node back to the head without unlinking it first */
   struct node* p = l;
   while (p->next != NULL) p = p->next;
   struct node* q = l;
   p->next = q;
   check(l);
   return 0;
}
