/* hdrlist.c: a doubly linked list with a malloc'd header {length, first,
   last} (the design of many C libraries' lists), with injectable faults.
   Not one of the fault-location paper's programs: its spec needs the
   constraint language's forms for real code (count, connections over
   chosen slots).

   What it does: makes the header, builds a list of BASE (1000) nodes by
   inserts at random positions, then runs OPS (500) random operations:
   insert a node with a random key before the node at a random position
   (or at the end), or delete the node at a random position. The header
   is one malloc'd struct hdr (new_header), reached through a global;
   each node is one malloc'd struct lnode {key, next, prev} (new_node).
   The first node's prev and the last node's next are NULL; the header's
   length is the number of nodes.

   C-points: MGTRACE_CPOINT("hdrlist") (no type of the spec: all its
   constraints) at the start and at the end of hl_insert and hl_delete
   (spec: hdrlist.spec, which declares none).

   Usage: hdrlist [SEED [BASE [OPS]]]   (defaults 1 1000 500: the
          xorshift64 sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          hdrlist.c
   There is no -DSELFCHECK version.

   Output (stdout): one line
       hdrlist seed S: count N walked N checksum XXXXXXXX
   (count: the header's length, walked: the nodes reached from first
   along next, checksum a hash of their keys). With FAULT=k, stderr gets
   "FAULT k fired at op N"; a walk longer than 1e6 steps in one
   operation stops the run ("giving up at op N", exit 3).

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  hl_delete: the length is decreased by 2 instead of 1: it no longer
      equals the nodes reachable from the header (count). From op 100.
   2  hl_insert: the node b after the new node n gets prev = b instead of
      n: n -> b has no edge back, b's prev makes a cycle, and the nodes
      reachable from last along prev are fewer than the length. From op
      200.
   3  hl_delete: unlinking d from between a and b sets a->next =
      b->next instead of b (where b has a successor): b is lost along
      next, a -> c has no edge back, and the nodes reachable from first
      are fewer than the length. From op 300. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 100000

struct lnode {
    long key;
    struct lnode *next;
    struct lnode *prev;
};

struct hdr {
    long length;
    struct lnode *first;
    struct lnode *last;
};

static struct hdr *h; /* the list's header (outside the heap) */

#include "suite.h" /* the suite's common part */

#define CPOINT(where) MGTRACE_CPOINT("hdrlist")

/* new_header allocates the header (not inlined: the spec binds the
   blocks it allocates). */
__attribute__((noinline)) static struct hdr *
new_header(void)
{
    struct hdr *l = malloc(sizeof(struct hdr));

    if (l == NULL) {
        perror("malloc");
        exit(1);
    }
    l->length = 0;
    l->first = l->last = NULL;
    return l;
}

/* new_node allocates every node of the list (not inlined: the spec
   binds the blocks it allocates). */
__attribute__((noinline)) static struct lnode *
new_node(long key)
{
    struct lnode *n = malloc(sizeof(struct lnode));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->next = NULL;
    n->prev = NULL;
    return n;
}

/* hl_insert links a new node with key before the node at position pos
   (pos == length: at the end). */
__attribute__((noinline)) void
hl_insert(long key, long pos)
{
    struct lnode *n, *a = NULL, *b = h->first;

    CPOINT("insert begin");
    n = new_node(key);
    while (pos-- > 0 && b != NULL) {
        step();
        a = b;
        b = b->next;
    }
    h->length++;
    if (b == NULL)
        h->last = n;
    else
#if FAULT == 2
        if (a != NULL && fault_fire(200)) FAULTY(b->prev, b); /* FAULT 2 */ else b->prev = n;
#else
        b->prev = n;
#endif
    n->next = b;
    n->prev = a;
    if (a == NULL)
        h->first = n;
    else
        a->next = n;
    CPOINT("insert end");
}

/* hl_delete unlinks and frees the node at position pos (0 is the
   first). */
__attribute__((noinline)) void
hl_delete(long pos)
{
    struct lnode *a, *b, *d = h->first;

    CPOINT("delete begin");
    while (pos-- > 0 && d->next != NULL) {
        step();
        d = d->next;
    }
    a = d->prev;
    b = d->next;
#if FAULT == 1
    if (fault_fire(100)) FAULTY(h->length, h->length - 2); /* FAULT 1 */ else h->length--;
#else
    h->length--;
#endif
    if (b == NULL)
        h->last = a;
    else
        b->prev = a;
    if (a == NULL)
        h->first = b;
    else
#if FAULT == 3
        if (b != NULL && b->next != NULL && fault_fire(300)) FAULTY(a->next, b->next); /* FAULT 3 */ else a->next = b;
#else
        a->next = b;
#endif
    free(d);
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct lnode *n;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    h = new_header();
    for (i = 0; i < n_base; i++) {
        steps = 0;
        hl_insert((long)rnd(KEYS), (long)rnd((unsigned)h->length + 1));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (h->length == 0 || rnd(2) == 0)
            hl_insert((long)rnd(KEYS), (long)rnd((unsigned)h->length + 1));
        else
            hl_delete((long)rnd((unsigned)h->length));
    }
    steps = 0;
    for (n = h->first; n != NULL; n = n->next) {
        step();
        sum = sum * 31 + (unsigned long)n->key;
        walked++;
    }
    printf("hdrlist seed %s: count %ld walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", h->length, walked, sum & 0xffffffffUL);
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
