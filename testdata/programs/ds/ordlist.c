/* ordlist.c: an ordered (sorted, singly linked) list, the "Ordered list"
   of the fault-location paper's evaluation (Table 3), with injectable faults.

   What it does: builds a list of BASE (1000) random keys by sorted
   inserts, then runs OPS (500) random operations: insert a random key
   (duplicates allowed; the new node goes before the first node whose key
   is not smaller) or delete the node at a random position. Each node is
   one malloc'd struct ordnode (new_node); the head is a global. Keys are
   in [0, 10000).

   C-points: MGTRACE_CPOINT("ordnode") at the start and at the end of
   ol_insert and ol_delete (spec: ordlist.spec, which declares none).

   Usage: ordlist [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] ordlist.c

   Output (stdout): one line
       ordlist seed S: count N walked N checksum XXXXXXXX
   (count is the program's node count, walked the nodes reached from the
   head, checksum a hash of the keys in list order). With FAULT=k, stderr
   gets "FAULT k fired at op N". A walk longer than 1e6 steps in one
   operation (a cycle) stops the run: "giving up at op N", exit 3.
   With -DSELFCHECK, stderr gets a line "SELFCHECK VIOLATION at op N
   (where): ..." for each constraint of ordlist.spec broken at a C-point
   (first 20), and a summary line at the end.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is the line marked
   with the comment FAULT k):
   1  ol_insert, line 392: the new node's next skips its successor
      (n->next = cur->next instead of cur), so cur->next has two
      predecessors (cur, now unreachable, and n): INDEGREE == 1 broken.
      From op 100.
   2  ol_insert, line 394: the new node's next points back at its
      predecessor (n->next = prev): a cycle prev -> n -> prev, the order
      n -> prev broken, prev has two predecessors. From op 200; the next
      walk then loops and the run gives up.
   3  ol_delete, line 418: unlinking skips one node too many
      (prev->next = victim->next->next): the skipped node, now
      unreachable, and prev both point to the node after it (INDEGREE
      2). From op 300.
   4  ol_insert, line 150: a missing statement: the link prev->next = n
      is not made (the line stores n->next = cur early, a correct store,
      in its place), so cur has two predecessors (prev and n), and n none.
      From op 400. */
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

struct ordnode {
    int key;
    struct ordnode *next;
};

static struct ordnode *head; /* the list (outside the heap) */
static int count;            /* nodes in the list */

#include "suite.h" /* the suite's common part */

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct ordnode *)p)->next;
}

/* selfcheck evaluates ordlist.spec: order along edges, INDEGREE <= 1,
   no cycle. */
static void
selfcheck(const char *where)
{
    int i, t;

    selfcheck_begin();
    graph_build(1, slots_of);
    for (i = 0; i < nlive; i++) {
        struct ordnode *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node key %d has INDEGREE %d", x->key,
                      g_indeg[i]);
        if ((t = g_out[i][0]) >= 0 && x->key > ((struct ordnode *)live[t])->key)
            violation(where, "edge %d -> %d out of order", x->key,
                      ((struct ordnode *)live[t])->key);
    }
    if (!g_acyclic)
        violation(where, "the list has a cycle");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("ordnode");                                          \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("ordnode")
#endif

/* new_node allocates every node of the list. */
static struct ordnode *
new_node(int key)
{
    struct ordnode *n = malloc(sizeof(struct ordnode));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->next = NULL;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct ordnode *n)
{
    LIVE_DEL(n);
    free(n);
}

/* ol_insert links a new node with key before the first node whose key is
   not smaller. */
__attribute__((noinline)) void
ol_insert(int key)
{
    struct ordnode *n, *prev = NULL, *cur = head;

    CPOINT("insert begin");
    n = new_node(key);
    while (cur != NULL && cur->key < key) {
        step();
        prev = cur;
        cur = cur->next;
    }
    if (prev == NULL)
        head = n;
#if FAULT == 4
    else if (cur != NULL && fault_fire(400)) FAULTY(n->next, cur); /* FAULT 4 */
#endif
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

/* ol_delete unlinks and frees the node at position pos (0 is the head). */
__attribute__((noinline)) void
ol_delete(int pos)
{
    struct ordnode *prev = NULL, *victim = head;

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
    struct ordnode *n;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        ol_insert((int)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            ol_insert((int)rnd(KEYS));
        else
            ol_delete((int)rnd((unsigned)count));
    }
    steps = 0;
    for (n = head; n != NULL; n = n->next) {
        step();
        sum = sum * 31 + (unsigned long)n->key;
        walked++;
    }
    printf("ordlist seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
