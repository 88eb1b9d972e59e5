/* nullcheck.c: a missing NULL check. find() returns NULL for a missing
   key, and the `if` that guards the dereference (line 33) tests the wrong
   thing. Switching its first instance skips the dereference and the run
   ends normally; unchanged, it crashes with SIGSEGV. */
#include <stdio.h>
#include <stdlib.h>

struct node {
   int key;
   int val;
   struct node* next;
};

static struct node* find(struct node* l, int key) {
   for (; l != NULL; l = l->next) {
      if (l->key == key) {
         return l;
      }
   }
   return NULL;
}

int main(int argc, char** argv) {
   struct node* l = NULL;
   for (int i = 0; i < 3; i++) {
      struct node* n = malloc(sizeof *n);
      n->key = i;
      n->val = i * 10;
      n->next = l;
      l = n;
   }
   struct node* n = find(l, argc + 6);
   if (argc > 0) { /* should test n != NULL */
      n->val++;
   }
   printf("done\n");
   return 0;
}
