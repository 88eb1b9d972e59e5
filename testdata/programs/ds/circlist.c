/* circlist.c: a circular singly linked list without a sentinel, the
   "Circular linked list" of the fault-location paper's evaluation (Table 3), with
   injectable faults.

   What it does: builds a circle of BASE (1000) nodes by inserts at
   random positions, then runs OPS (500) random operations: insert a node
   with a random key after the node at a random position, or delete the
   node after the node at a random position. Each node is one malloc'd
   struct cnode (new_node); the list is reached through the global tail
   (tail->next is the first node); a one-node list points to itself.

   C-points: declared in circlist.spec (CPOINT cl_insert ENTRY/EXIT,
   CPOINT cl_delete ENTRY/EXIT); the program has no MGTRACE_CPOINT.

   Usage: circlist [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] circlist.c

   Output (stdout): one line
       circlist seed S: count N walked N checksum XXXXXXXX
   (walked: nodes met going round once from the tail, checksum a hash of
   their keys). With FAULT=k, stderr gets "FAULT k fired at op N"; a
   walk longer than 1e6 steps in one operation stops the run ("giving up
   at op N", exit 3). With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION
   at op N (where): ..." for each constraint of circlist.spec broken at a
   C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  cl_insert, line 438: the new node n (already pointing at q, the
      successor of p) is linked from q instead of p (q->next = n): q's
      old successor loses its only predecessor (INDEGREE 0), q has two
      (p and n), the circle is broken. From op 100.
   2  cl_delete, line 466: unlinking the node d after p skips one node
      too many (p->next = d->next->next): the skipped node and p both
      point at the node after it (INDEGREE 2); once d is freed the skipped
      node has no predecessor. From op 200.
   3  cl_insert, line 433: the new node points back at p instead of q
      (n->next = p): p and n form a two-node cycle, p has two
      predecessors, q none. From op 300.
   4  cl_delete: the unlink writes p->next = p->next (p typed for d), the
      value it holds: nothing changes until the correct free of d, which
      leaves p's next dangling and d's successor with no predecessor (the
      free exposes the unlink's fault). From op 400. */
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

struct cnode {
    int key;
    struct cnode *next;
};

static struct cnode *tail; /* the list: tail->next is the first node */
static int count;          /* nodes in the list */

#include "suite.h" /* the suite's common part */

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct cnode *)p)->next;
}

/* reached marks the nodes reachable from node 0 (backwards when rev). */
static int
reached(int rev)
{
    static int mark[MAXLIVE], stack[MAXLIVE], pred[MAXLIVE], first[MAXLIVE + 1];
    int i, t, sp = 0, n = 1;

    if (nlive == 0)
        return 0;
    /* predecessor lists, by counting */
    memset(first, 0, sizeof first);
    for (i = 0; i < nlive; i++)
        if ((t = g_out[i][0]) >= 0)
            first[t + 1]++;
    for (i = 0; i < nlive; i++)
        first[i + 1] += first[i];
    for (i = 0; i < nlive; i++)
        if ((t = g_out[i][0]) >= 0)
            pred[first[t]++] = i;
    for (i = nlive; i > 0; i--)
        first[i] = first[i - 1];
    first[0] = 0;
    memset(mark, 0, sizeof mark);
    mark[0] = 1;
    stack[sp++] = 0;
    while (sp > 0) {
        i = stack[--sp];
        if (!rev) {
            if ((t = g_out[i][0]) >= 0 && !mark[t]) {
                mark[t] = 1;
                n++;
                stack[sp++] = t;
            }
            continue;
        }
        for (t = first[i]; t < first[i + 1]; t++)
            if (!mark[pred[t]]) {
                mark[pred[t]] = 1;
                n++;
                stack[sp++] = pred[t];
            }
    }
    return n;
}

/* selfcheck evaluates circlist.spec: INDEGREE == OUTDEGREE == 1, and a
   path from every node to every node (one circle). */
static void
selfcheck(const char *where)
{
    int i, fwd, bwd;

    selfcheck_begin();
    graph_build(1, slots_of);
    for (i = 0; i < nlive; i++)
        if (g_indeg[i] != 1 || g_outdeg[i] != 1)
            violation(where, "node key %d has INDEGREE %d OUTDEGREE %d",
                      ((struct cnode *)live[i])->key, g_indeg[i],
                      g_outdeg[i]);
    if (nlive > 0) {
        fwd = reached(0);
        bwd = reached(1);
        if (fwd != nlive || bwd != nlive || (nlive == 1 && g_out[0][0] != 0))
            violation(where, "not one circle: %d nodes, %d reachable from "
                      "node key %d, %d reach it", nlive, fwd,
                      ((struct cnode *)live[0])->key, bwd);
    }
}
#define SC(where) selfcheck(where)
#else
#define SC(where) ((void)0)
#endif

/* new_node allocates every node of the list. */
static struct cnode *
new_node(int key)
{
    struct cnode *n = malloc(sizeof(struct cnode));

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
free_node(struct cnode *n)
{
    LIVE_DEL(n);
    free(n);
}

/* cl_insert links a new node with key after the node pos steps after the
   tail (pos 0: after the tail, which makes the new node the tail). */
__attribute__((noinline)) void
cl_insert(int key, int pos)
{
    struct cnode *n, *p = tail, *q;

    SC("insert entry");
    n = new_node(key);
    if (p == NULL) {
        n->next = n;
        tail = n;
    } else {
        while (pos-- > 0) {
            step();
            p = p->next;
        }
        q = p->next;
#if FAULT == 3
        if (q != p && fault_fire(300)) FAULTY(n->next, p); /* FAULT 3 */ else n->next = q;
#else
        n->next = q;
#endif
#if FAULT == 1
        if (q != p && fault_fire(100)) FAULTY(q->next, n); /* FAULT 1 */ else p->next = n;
#else
        p->next = n;
#endif
        if (p == tail)
            tail = n;
    }
    count++;
    SC("insert exit");
}

/* cl_delete unlinks and frees the node after the node pos steps after
   the tail. */
__attribute__((noinline)) void
cl_delete(int pos)
{
    struct cnode *p = tail, *d;

    SC("delete entry");
    while (pos-- > 0) {
        step();
        p = p->next;
    }
    d = p->next;
    if (d == p) {
        tail = NULL;
    } else {
#if FAULT == 2
        if (count >= 4 && fault_fire(200)) FAULTY(p->next, d->next->next); /* FAULT 2 */ else p->next = d->next;
#elif FAULT == 4
        if (fault_fire(400)) FAULTY(p->next, p->next); /* FAULT 4 */ else p->next = d->next;
#else
        p->next = d->next;
#endif
        if (d == tail)
            tail = p;
    }
    free_node(d);
    count--;
    SC("delete exit");
}

int
main(int argc, char **argv)
{
    struct cnode *n;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        cl_insert((int)rnd(KEYS), count > 0 ? (int)rnd((unsigned)count) : 0);
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count <= 1 || rnd(2) == 0)
            cl_insert((int)rnd(KEYS), count > 0 ? (int)rnd((unsigned)count) : 0);
        else
            cl_delete((int)rnd((unsigned)count));
    }
    steps = 0;
    if (tail != NULL) {
        n = tail;
        do {
            step();
            n = n->next;
            sum = sum * 31 + (unsigned long)n->key;
            walked++;
        } while (n != tail);
    }
    printf("circlist seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
