/* heap.c: a value flowing through heap memory and pointer aliases.

   Exercises: byte-exact memory dependences on the heap, pointer
   (address-register) dependences, aliasing (a value stored through one
   pointer and loaded through another), and irrelevant stores to other
   fields of the same node and to another node.

   Two nodes a and b are malloc'd (in that order), linked a->next = b;
   `alias` is loaded back from a->next and 42 is stored through it into
   b->val; the criterion loads b->val through b. Then a third node c,
   malloc'd after a and b, gets irrelevant stores.

   Output: `v 84 w 14 other 9 c 3`; exit 0.

   Criteria:
   v  (`long v = b->val * 2;`): loads b (the `b = malloc` line stored
      malloc's return value in b) and the 8 bytes of b->val, last written
      by `alias->val = 42` (the earlier `b->val = 1` was overwritten:
      out). That store's address is alias, stored by `alias = a->next`,
      which loads a (`a = malloc` line) and a->next (written by
      `a->next = b`, which reads a and b). So in: both malloc lines,
      a->next = b, alias = a->next, alias->val = 42. The malloc lines are
      in for a second reason too: b's address is carved from the arena
      top that the malloc of a advanced by a's size (libc code; only the
      call lines are the program's). Out: `b->val = 1` (overwritten),
      `b->other = 7` and `b->other = 9` (other bytes of the same node),
      `a->val = 5`, c's malloc and stores (c is allocated after a and b,
      so neither a's nor b's address depends on it), w's lines.
   w  (`long w = a->val + c->val;`): loads a and c (their malloc lines)
      and the bytes of a->val (last written by `a->val = 11`; the
      earlier `a->val = 5` is overwritten: out) and c->val (`c->val = 3`).
      c's address is carved from the arena top that the mallocs of a and
      b advanced (libc code called from their lines, with the size in
      edi set on those lines), so b's malloc line is in too (a's is in
      anyway). Out: the whole a->next/alias chain, `c->other = 8`, b's
      field stores.
   Line attribution (gcc 12 -O0): `p = malloc(N)` is all on its line
   (mov $N,%edi; call malloc@plt; mov %rax,p(%rbp)); `p->f = k` loads p
   into rax and stores through it on its line. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    long val;
    long other;
    struct node *next;
};

int
main(void)
{
    struct node *a = malloc(sizeof *a);          //@ in=v,w
    struct node *b = malloc(sizeof *b);          //@ in=v,w
    a->val = 5;
    b->val = 1;
    a->next = b;                                 //@ in=v
    b->other = 7;
    struct node *alias = a->next;                //@ in=v
    alias->val = 42;                             //@ in=v
    b->other = 9;
    struct node *c = malloc(sizeof *c);          //@ in=w
    c->val = 3;                                  //@ in=w
    c->other = 8;
    a->val = 11;                                 //@ in=w
    long v = b->val * 2;                         //@ crit=v
    long w = a->val + c->val;                    //@ crit=w
    printf("v %ld w %ld other %ld c %ld\n", v, w, b->other, c->val);
    free(c);
    free(b);
    free(a);
    return 0;
}
