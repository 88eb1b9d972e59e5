/* poollist.c: an ordered (sorted, singly linked) list whose nodes come
   from the program's own allocator: a fixed pool of POOL_SLOTS nodes
   carved out of one malloc'd arena, with a free list. Not a structure of
   the fault-location paper (it has no row for it): it tests the binding
   of a spec type to the blocks a program's own allocation function
   returns (poollist.spec: `pnode ALLOC pool_get RETURNS;` and
   `pnode FREE pool_put;`). Otherwise it is ordlist.c.

   What it does: builds a list of BASE (1000) random keys by sorted
   inserts, then runs OPS (500) random operations: insert a random key
   (duplicates allowed; the new node goes before the first node whose key
   is not smaller) or delete the node at a random position. Nodes are
   struct pnode slots of the arena, handed out by pool_get and given back
   by pool_put (which links them into the free list through their next
   field); the head is a global. Keys are in [0, 10000).

   C-points: MGTRACE_CPOINT("pnode") at the start and at the end of
   pl_insert and pl_delete (poollist.spec declares none).

   Usage: poollist [SEED [BASE [OPS]]]   (defaults 1 1000 500)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] poollist.c

   Output (stdout): one line
       poollist seed S: count N walked N checksum XXXXXXXX
   With FAULT=k, stderr gets "FAULT k fired at op N". A walk longer than
   1e6 steps in one operation (a cycle) stops the run: "giving up at op
   N", exit 3. With -DSELFCHECK, stderr gets the self-check's lines.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is the line marked
   with the comment FAULT k):
   1  pl_insert: the new node's next skips its successor (n->next =
      cur->next instead of cur): INDEGREE == 1 broken. From op 100.
   2  pl_insert: the new node's next points back at its predecessor
      (n->next = prev): a cycle, the order broken. From op 200; the next
      walk then loops and the run gives up.
   3  pl_delete: unlinking skips one node too many (prev->next =
      victim->next->next): INDEGREE 2. From op 300. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 10000
#define POOL_SLOTS 4096 /* BASE (at most 3000) + OPS (at most 500) nodes */

struct pnode {
    int key;
    struct pnode *next;
};

/* The pool: POOL_SLOTS nodes carved out of one malloc'd arena; the free
   slots are chained through their next field, last freed first. */
static struct {
    struct pnode *arena; /* the one malloc */
    struct pnode *free;  /* the free list */
} pool;

static struct pnode *head; /* the list (outside the heap) */
static int count;            /* nodes in the list */

#include "suite.h" /* the suite's common part */

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct pnode *)p)->next;
}

/* selfcheck evaluates poollist.spec: order along edges, INDEGREE <= 1,
   no cycle. */
static void
selfcheck(const char *where)
{
    int i, t;

    selfcheck_begin();
    graph_build(1, slots_of);
    for (i = 0; i < nlive; i++) {
        struct pnode *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node key %d has INDEGREE %d", x->key,
                      g_indeg[i]);
        if ((t = g_out[i][0]) >= 0 && x->key > ((struct pnode *)live[t])->key)
            violation(where, "edge %d -> %d out of order", x->key,
                      ((struct pnode *)live[t])->key);
    }
    if (!g_acyclic)
        violation(where, "the list has a cycle");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("pnode");                                          \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("pnode")
#endif

/* pool_init carves the arena into POOL_SLOTS free slots. */
static void
pool_init(void)
{
    int i;

    pool.arena = malloc(POOL_SLOTS * sizeof(struct pnode));
    if (pool.arena == NULL) {
        perror("malloc");
        exit(1);
    }
    pool.free = NULL;
    for (i = POOL_SLOTS - 1; i >= 0; i--) {
        pool.arena[i].next = pool.free;
        pool.free = &pool.arena[i];
    }
}

/* pool_get hands out a free slot: the program's own allocator, which the
   spec binds with `pnode ALLOC pool_get RETURNS;`. */
__attribute__((noinline)) struct pnode *
pool_get(void)
{
    struct pnode *n = pool.free;

    if (n == NULL) {
        fprintf(stderr, "pool exhausted\n");
        exit(1);
    }
    pool.free = n->next;
    return n;
}

/* pool_put gives a slot back (`pnode FREE pool_put;`): it joins the free
   list through its next field. */
__attribute__((noinline)) void
pool_put(struct pnode *n)
{
    n->next = pool.free;
    pool.free = n;
}

/* new_node takes every node of the list from the pool. */
static struct pnode *
new_node(int key)
{
    struct pnode *n = pool_get();

    n->key = key;
    n->next = NULL;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct pnode *n)
{
    LIVE_DEL(n);
    pool_put(n);
}

/* pl_insert links a new node with key before the first node whose key is
   not smaller. */
__attribute__((noinline)) void
pl_insert(int key)
{
    struct pnode *n, *prev = NULL, *cur = head;

    CPOINT("insert begin");
    n = new_node(key);
    while (cur != NULL && cur->key < key) {
        step();
        prev = cur;
        cur = cur->next;
    }
    if (prev == NULL)
        head = n;
    else
        prev->next = n;
#if FAULT == 1
    if (cur != NULL && cur->next != NULL && fault_fire(100)) FAULTY(n->next, cur->next); /* FAULT 1 */ else n->next = cur;
#elif FAULT == 2
    if (prev != NULL && fault_fire(200)) FAULTY(n->next, prev); /* FAULT 2 */ else n->next = cur;
#else
    n->next = cur;
#endif
    count++;
    CPOINT("insert end");
}

/* pl_delete unlinks and frees the node at position pos (0 is the head). */
__attribute__((noinline)) void
pl_delete(int pos)
{
    struct pnode *prev = NULL, *victim = head;

    CPOINT("delete begin");
    while (pos-- > 0 && victim->next != NULL) {
        step();
        prev = victim;
        victim = victim->next;
    }
    if (prev == NULL) {
        head = victim->next;
    } else {
#if FAULT == 3
        if (victim->next != NULL && victim->next->next != NULL && fault_fire(300)) FAULTY(prev->next, victim->next->next); /* FAULT 3 */ else prev->next = victim->next;
#else
        prev->next = victim->next;
#endif
    }
    free_node(victim);
    count--;
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct pnode *n;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    pool_init();
    for (i = 0; i < n_base; i++) {
        steps = 0;
        pl_insert((int)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            pl_insert((int)rnd(KEYS));
        else
            pl_delete((int)rnd((unsigned)count));
    }
    steps = 0;
    for (n = head; n != NULL; n = n->next) {
        step();
        sum = sum * 31 + (unsigned long)n->key;
        walked++;
    }
    printf("poollist seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the list and its pool stay allocated: the end of the run is a C-point */
}
