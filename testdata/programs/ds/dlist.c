/* dlist.c: a doubly linked list, the "Doubly-linked list" of the fault-location paper's
   evaluation (Table 3), with injectable faults.

   What it does: builds a list of BASE (1000) nodes by inserts at random
   positions, then runs OPS (500) random operations: insert a node with a
   random key before the node at a random position (or at the end), or
   delete the node at a random position. Each node is one malloc'd
   struct dnode (new_node) with next and prev; the head is a global, the
   first node's prev and the last node's next are NULL.

   C-points: MGTRACE_CPOINT("dnode") at the start and at the end of
   dl_insert and dl_delete (spec: dlist.spec, which declares none).

   Usage: dlist [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] dlist.c

   Output (stdout): one line
       dlist seed S: count N walked N checksum XXXXXXXX
   (walked: nodes reached from the head along next, checksum a hash of
   their keys). With FAULT=k, stderr gets "FAULT k fired at op N"; a walk
   longer than 1e6 steps in one operation stops the run ("giving up at
   op N", exit 3). With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION at
   op N (where): ..." for each constraint of dlist.spec broken at a
   C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  dl_insert, line 383: the new node n, to go between a and b, gets
      next = b->next instead of b: n points at b's successor c, which
      does not point back (X -> Y => Y -> X broken for n -> c). From op
      100.
   2  dl_delete, line 421: unlinking d from between a and b sets
      b->prev = a->prev instead of a: b points at a's predecessor, which
      does not point back. From op 200.
   3  dl_insert, line 391: the new node is linked from a's predecessor
      (a->prev->next = n) instead of from a: that node points at n, which
      does not point back, and a's own links are left one-sided. From
      op 300.
   4  dl_delete, line 179: unlinking d from between a and b stores
      a->next = d, the value a->next already holds, instead of b (a
      store the memory graph sees change nothing): after the free of d,
      b points back at a, which does not point at b. From op 400. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 100000

struct dnode {
    int key;
    struct dnode *next;
    struct dnode *prev;
};

static struct dnode *head; /* the list (outside the heap) */
static int count;          /* nodes in the list */

#include "suite.h" /* the suite's common part */

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct dnode *)p)->next;
    slots[1] = ((struct dnode *)p)->prev;
}

/* selfcheck evaluates dlist.spec: every edge X -> Y has an edge Y -> X. */
static void
selfcheck(const char *where)
{
    int i, s, t;

    selfcheck_begin();
    graph_build(2, slots_of);
    for (i = 0; i < nlive; i++)
        for (s = 0; s < 2; s++)
            if ((t = g_out[i][s]) >= 0 && g_out[t][0] != i && g_out[t][1] != i)
                violation(where, "edge key %d -> key %d (%s) has no edge back",
                          ((struct dnode *)live[i])->key,
                          ((struct dnode *)live[t])->key, s ? "prev" : "next");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("dnode");                                            \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("dnode")
#endif

/* new_node allocates every node of the list. */
static struct dnode *
new_node(int key)
{
    struct dnode *n = malloc(sizeof(struct dnode));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->next = NULL;
    n->prev = NULL;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct dnode *n)
{
    LIVE_DEL(n);
    free(n);
}

/* dl_insert links a new node with key before the node at position pos
   (pos == count: at the end). */
__attribute__((noinline)) void
dl_insert(int key, int pos)
{
    struct dnode *n, *a = NULL, *b = head;

    CPOINT("insert begin");
    n = new_node(key);
    while (pos-- > 0 && b != NULL) {
        step();
        a = b;
        b = b->next;
    }
    n->prev = a;
#if FAULT == 1
    if (b != NULL && b->next != NULL && fault_fire(100)) FAULTY(n->next, b->next); /* FAULT 1 */ else n->next = b;
#else
    n->next = b;
#endif
    if (a == NULL) {
        head = n;
    } else {
#if FAULT == 3
        if (a->prev != NULL && fault_fire(300)) FAULTY(a->prev->next, n); /* FAULT 3 */ else a->next = n;
#else
        a->next = n;
#endif
    }
    if (b != NULL)
        b->prev = n;
    count++;
    CPOINT("insert end");
}

/* dl_delete unlinks and frees the node at position pos (0 is the head). */
__attribute__((noinline)) void
dl_delete(int pos)
{
    struct dnode *a, *b, *d = head;

    CPOINT("delete begin");
    while (pos-- > 0 && d->next != NULL) {
        step();
        d = d->next;
    }
    a = d->prev;
    b = d->next;
    if (a == NULL)
        head = b;
    else
#if FAULT == 4
        if (b != NULL && fault_fire(400)) FAULTY(a->next, d); /* FAULT 4 */ else a->next = b;
#else
        a->next = b;
#endif
    if (b != NULL) {
#if FAULT == 2
        if (a != NULL && a->prev != NULL && fault_fire(200)) FAULTY(b->prev, a->prev); /* FAULT 2 */ else b->prev = a;
#else
        b->prev = a;
#endif
    }
    free_node(d);
    count--;
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct dnode *n;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        dl_insert((int)rnd(KEYS), (int)rnd((unsigned)count + 1));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            dl_insert((int)rnd(KEYS), (int)rnd((unsigned)count + 1));
        else
            dl_delete((int)rnd((unsigned)count));
    }
    steps = 0;
    for (n = head; n != NULL; n = n->next) {
        step();
        sum = sum * 31 + (unsigned long)n->key;
        walked++;
    }
    printf("dlist seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
