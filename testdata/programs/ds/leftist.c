/* leftist.c: a leftist heap (a min-heap), the "Leftist heap" of seed
   002's evaluation (Table 3), with injectable faults.

   What it does: each node stores its null path length npl (the length
   of the path down its right spine to a NULL child; a NULL child has
   -1), and a left child's npl is never smaller than the right child's.
   merge() merges two heaps along their right spines, swapping children
   where the leftist property needs it; insert merges a one-node heap
   into the heap, delete-min replaces the root by the merge of its two
   subtrees. The program inserts BASE (1000) random keys (duplicates
   allowed), then runs OPS (500) random operations: insert a random key
   or delete the minimum. Each node is one malloc'd struct leftist
   (new_node); the root is a global.

   C-points: MGTRACE_CPOINT("leftist") at the start and at the end of
   lh_insert and lh_delete_min (spec: leftist.spec, which declares none).

   Usage: leftist [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] leftist.c

   Output (stdout): one line
       leftist seed S: count N walked N min K checksum XXXXXXXX
   (count: nodes in the heap; walked: nodes met walking it from the root;
   min: the root's key; checksum: a hash of the keys deleted in the
   second phase, in order). With FAULT=k, stderr gets "FAULT k fired at
   op N"; more than 1e6 steps in one operation stop the run ("giving up
   at op N", exit 3). With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION
   at op N (where): ..." for each constraint of leftist.spec broken at a
   C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  merge, line 432: the root of the merged heap gets npl from its left
      child instead of its right one (npl(left) + 1, larger than the true
      value): the stored npl is not the node's null path length. It fires
      at the top of a merge, where the node has no parent whose merge
      step would read the wrong value. From op 100.
   2  merge, line 418: during an insert, when the new node's key is
      smaller than that of a heap node without a right child, the new
      node is stored as that node's right child instead of becoming the
      root of the merge: a parent with a larger key than its child (heap
      order broken). From op 200.
   4  merge, line 189: the key of b is stored into a->right instead of
      merging b into it (an integer in a pointer field): a->right holds a
      small non-heap address, so the right subtree (and b) is cut off and a's
      stored npl (at least 1) is no longer its null path length (0). The
      same operation then follows the link (npl(a->right)) and dies of
      SIGSEGV before its end C-point: the crash is the first C-point
      after the store. From op 400. */
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

struct leftist {
    int key;
    int npl;
    struct leftist *left, *right;
};

static struct leftist *root; /* the heap (outside the heap memory) */
static int count;            /* nodes in the heap */
static int inserting;        /* inside lh_insert */

#include "suite.h" /* the suite's common part */

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct leftist *)p)->left;
    slots[1] = ((struct leftist *)p)->right;
}

/* selfcheck evaluates leftist.spec: INDEGREE <= 1, no cycle, heap order
   along edges, NPL (-1 for NULL, one more than the right child's) of the
   left child not smaller than the right's, stored npl == NPL. */
static void
selfcheck(const char *where)
{
    static int npl[MAXLIVE];
    int i, k, s, nl, nr;

    selfcheck_begin();
    graph_build(2, slots_of);
    for (i = 0; i < nlive; i++) {
        struct leftist *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node %d has INDEGREE %d", x->key, g_indeg[i]);
        for (s = 0; s < 2; s++)
            if (g_out[i][s] >= 0 &&
                x->key > ((struct leftist *)live[g_out[i][s]])->key)
                violation(where, "edge %d -> %d out of heap order", x->key,
                          ((struct leftist *)live[g_out[i][s]])->key);
    }
    if (!g_acyclic) {
        violation(where, "the heap has a cycle");
        return;
    }
    for (k = nlive - 1; k >= 0; k--) { /* children before parents */
        struct leftist *x = live[i = g_order[k]];

        nl = g_out[i][0] >= 0 ? npl[g_out[i][0]] : -1;
        nr = g_out[i][1] >= 0 ? npl[g_out[i][1]] : -1;
        npl[i] = nr + 1;
        if (nl < nr)
            violation(where, "node %d: left NPL %d < right NPL %d", x->key,
                      nl, nr);
        if (x->npl != npl[i])
            violation(where, "node %d stores npl %d, NPL is %d", x->key,
                      x->npl, npl[i]);
    }
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("leftist");                                          \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("leftist")
#endif

/* new_node allocates every node of the heap. */
static struct leftist *
new_node(int key)
{
    struct leftist *n = malloc(sizeof(struct leftist));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->npl = 0;
    n->left = NULL;
    n->right = NULL;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct leftist *n)
{
    LIVE_DEL(n);
    free(n);
}

static int
npl(const struct leftist *h)
{
    return h == NULL ? -1 : h->npl;
}

/* merge merges the heaps a and b and returns the root of the result;
   depth is 0 for the outermost call. */
static struct leftist *
merge(struct leftist *a, struct leftist *b, int depth)
{
    struct leftist *t;

    step();
    if (a == NULL)
        return b;
    if (b == NULL)
        return a;
    if (b->key < a->key) {
#if FAULT == 2
        if (inserting && a->right == NULL && fault_fire(200)) { FAULTY(a->right, b); b = NULL; } /* FAULT 2 */ else { t = a; a = b; b = t; }
#else
        t = a;
        a = b;
        b = t;
#endif
    }
#if FAULT == 4
    if (a->right != NULL && fault_fire(400)) FAULTY(a->right, (struct leftist *)(uintptr_t)b->key); /* FAULT 4 */ else a->right = merge(a->right, b, depth + 1);
#else
    a->right = merge(a->right, b, depth + 1);
#endif
    if (npl(a->left) < npl(a->right)) {
        t = a->left;
        a->left = a->right;
        a->right = t;
    }
#if FAULT == 1
    if (depth == 0 && npl(a->left) != npl(a->right) && fault_fire(100)) FAULTY(a->npl, npl(a->left) + 1); /* FAULT 1 */ else a->npl = npl(a->right) + 1;
#else
    a->npl = npl(a->right) + 1;
#endif
    return a;
}

/* lh_insert adds key. */
__attribute__((noinline)) void
lh_insert(int key)
{
    CPOINT("insert begin");
    inserting = 1;
    root = merge(root, new_node(key), 0);
    inserting = 0;
    count++;
    CPOINT("insert end");
}

/* lh_delete_min removes the root and returns its key. */
__attribute__((noinline)) int
lh_delete_min(void)
{
    struct leftist *old = root;
    int key = old->key;

    CPOINT("delete begin");
    root = merge(old->left, old->right, 0);
    free_node(old);
    count--;
    CPOINT("delete end");
    return key;
}

static void
walk(const struct leftist *n, int *walked)
{
    if (n == NULL)
        return;
    step();
    ++*walked;
    walk(n->left, walked);
    walk(n->right, walked);
}

int
main(int argc, char **argv)
{
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        lh_insert((int)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            lh_insert((int)rnd(KEYS));
        else
            sum = sum * 31 + (unsigned long)lh_delete_min();
    }
    steps = 0;
    walk(root, &walked);
    printf("leftist seed %s: count %d walked %d min %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked,
           root != NULL ? root->key : -1, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the heap stays allocated: the end of the run is a C-point */
}
