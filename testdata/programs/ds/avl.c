/* avl.c: an AVL tree, the "AVL tree" of the fault-location paper's evaluation (Table 3),
   with injectable faults.

   What it does: the node is the fault-location paper's struct avltree (a value and two
   children, right before left, no stored height: heights are computed
   by walking the subtrees). Inserts and deletes are the usual recursive
   ones; after each, the nodes on the way back up are rebalanced by
   single or double rotations (rotate_right, rotate_left). A node with
   two children is deleted by copying its successor's value into it and
   deleting the successor from its right subtree. The program inserts
   BASE (1000) distinct random keys, then runs OPS (500) random
   operations: insert a new random key or delete a random present one.
   Each node is one malloc'd struct avltree (new_node); the root is a
   global.

   C-points: declared in avl.spec (CPOINT avl_insert ENTRY/EXIT, CPOINT
   avl_delete ENTRY/EXIT); the program has no MGTRACE_CPOINT.

   Usage: avl [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] avl.c

   Output (stdout): one line
       avl seed S: keys N walked N height H checksum XXXXXXXX
   (keys: keys present; walked: nodes met walking the tree from the root;
   height: the root's height; checksum: a hash of the keys in order).
   With FAULT=k, stderr gets "FAULT k fired at op N"; more than 1e6
   steps in one operation stop the run ("giving up at op N", exit 3).
   With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION at op N (where):
   ..." for each constraint of avl.spec broken at a C-point (first 20)
   and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  rotate_right, line 404: the rotated node y takes x->left instead of
      x->right as its new left child: that subtree has two parents (x and
      y; INDEGREE == 1 broken) and x's right subtree is cut off. From op
      100.
   2  rotate_left, line 418: the mirror image: x takes y->right instead of
      y->left as its new right child. From op 200.
   3  del, line 483: after deleting the successor of a node with two
      children, the right subtree is stored into the node's left child
      instead of its right one: both children are the same subtree
      (INDEGREE 2) and the left subtree is cut off. From op 300.
   4  ins, line 217: the key is stored into the left child instead of the
      subtree ins returned (an integer in a pointer field): n->left holds
      a small non-heap address, so the left subtree is cut off and n is
      out of balance (its right subtree is at least 1 high). The same
      insert then follows the link (rebalance: height(n->left)) and dies
      of SIGSEGV before avl_insert EXIT: the crash is the first C-point
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

#define KEYS (1 << 17)

struct avltree {
    int val;
    struct avltree *right, *left;
};

static struct avltree *root; /* the tree (outside the heap) */
static int nkeys;            /* keys present: keys[i] */
static int keys[4096];
static unsigned char present[KEYS / 8];

#include "suite.h" /* the suite's common part */

_Static_assert(sizeof keys / sizeof keys[0] >= MAXBASE + OPS, "keys must hold every key");

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct avltree *)p)->right;
    slots[1] = ((struct avltree *)p)->left;
}

/* selfcheck evaluates avl.spec: INDEGREE <= 1, no cycle, and heights of
   the two subtrees (-1 for an empty one) differ by at most one. */
static void
selfcheck(const char *where)
{
    static int h[MAXLIVE];
    int i, k, hr, hl;

    selfcheck_begin();
    graph_build(2, slots_of);
    for (i = 0; i < nlive; i++)
        if (g_indeg[i] > 1)
            violation(where, "node %d has INDEGREE %d",
                      ((struct avltree *)live[i])->val, g_indeg[i]);
    if (!g_acyclic) {
        violation(where, "the tree has a cycle");
        return;
    }
    for (k = nlive - 1; k >= 0; k--) { /* children before parents */
        i = g_order[k];
        hr = g_out[i][0] >= 0 ? h[g_out[i][0]] : -1;
        hl = g_out[i][1] >= 0 ? h[g_out[i][1]] : -1;
        h[i] = (hr >= hl ? hr : hl) + 1;
        if (hr - hl > 1 || hr - hl < -1)
            violation(where, "node %d: right height %d, left height %d",
                      ((struct avltree *)live[i])->val, hr, hl);
    }
}
#define SC(where) selfcheck(where)
#else
#define SC(where) ((void)0)
#endif

/* new_node allocates every node of the tree. */
static struct avltree *
new_node(int val)
{
    struct avltree *n = malloc(sizeof(struct avltree));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->val = val;
    n->right = NULL;
    n->left = NULL;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct avltree *n)
{
    LIVE_DEL(n);
    free(n);
}

/* height is the height of the subtree n (-1 when empty). */
static int
height(const struct avltree *n)
{
    int hr, hl;

    if (n == NULL)
        return -1;
    step();
    hr = height(n->right);
    hl = height(n->left);
    return (hr >= hl ? hr : hl) + 1;
}

static struct avltree *
rotate_right(struct avltree *y)
{
    struct avltree *x = y->left;

#if FAULT == 1
    if (x->left != NULL && fault_fire(100)) FAULTY(y->left, x->left); /* FAULT 1 */ else y->left = x->right;
#else
    y->left = x->right;
#endif
    x->right = y;
    return x;
}

static struct avltree *
rotate_left(struct avltree *x)
{
    struct avltree *y = x->right;

#if FAULT == 2
    if (y->right != NULL && fault_fire(200)) FAULTY(x->right, y->right); /* FAULT 2 */ else x->right = y->left;
#else
    x->right = y->left;
#endif
    y->left = x;
    return y;
}

/* rebalance restores the balance of n, whose subtrees are balanced and
   differ in height by at most two; it returns the subtree's new root. */
static struct avltree *
rebalance(struct avltree *n)
{
    int b = height(n->left) - height(n->right);

    if (b > 1) {
        if (height(n->left->left) < height(n->left->right))
            n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (b < -1) {
        if (height(n->right->right) < height(n->right->left))
            n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    return n;
}

static struct avltree *
ins(struct avltree *n, int val)
{
    step();
    if (n == NULL)
        return new_node(val);
    if (val < n->val)
#if FAULT == 4
        if (n->right != NULL && (n->right->left != NULL || n->right->right != NULL) && fault_fire(400)) { ins(n->left, val); FAULTY(n->left, (struct avltree *)(uintptr_t)val); /* FAULT 4 */ } else n->left = ins(n->left, val);
#else
        n->left = ins(n->left, val);
#endif
    else if (val > n->val)
        n->right = ins(n->right, val);
    else
        return n;
    return rebalance(n);
}

static struct avltree *
del(struct avltree *n, int val)
{
    struct avltree *t, *s;

    step();
    if (n == NULL)
        return NULL;
    if (val < n->val) {
        n->left = del(n->left, val);
    } else if (val > n->val) {
        n->right = del(n->right, val);
    } else if (n->left == NULL || n->right == NULL) {
        t = n->left != NULL ? n->left : n->right;
        free_node(n);
        return t;
    } else {
        for (s = n->right; s->left != NULL; s = s->left)
            step();
        n->val = s->val;
        t = del(n->right, s->val);
#if FAULT == 3
        if (t == n->right && fault_fire(300)) FAULTY(n->left, t); /* FAULT 3 */ else n->right = t;
#else
        n->right = t;
#endif
    }
    return rebalance(n);
}

/* avl_insert adds val, which is not in the tree. */
__attribute__((noinline)) void
avl_insert(int val)
{
    SC("insert entry");
    root = ins(root, val);
    SC("insert exit");
}

/* avl_delete removes val, which is in the tree. */
__attribute__((noinline)) void
avl_delete(int val)
{
    SC("delete entry");
    root = del(root, val);
    SC("delete exit");
}

static int
is_present(int k)
{
    return present[k / 8] >> (k % 8) & 1;
}

static void
add_key(void)
{
    int k;

    do
        k = (int)rnd(KEYS);
    while (is_present(k));
    present[k / 8] |= (unsigned char)(1u << (k % 8));
    keys[nkeys++] = k;
    avl_insert(k);
}

static void
remove_key(void)
{
    int i = (int)rnd((unsigned)nkeys), k = keys[i];

    present[k / 8] &= (unsigned char)~(1u << (k % 8));
    keys[i] = keys[--nkeys];
    avl_delete(k);
}

static void
walk(const struct avltree *n, int *walked, unsigned long *sum)
{
    if (n == NULL)
        return;
    step();
    walk(n->left, walked, sum);
    ++*walked;
    *sum = *sum * 31 + (unsigned long)n->val;
    walk(n->right, walked, sum);
}

int
main(int argc, char **argv)
{
    unsigned long sum = 0;
    int i, walked = 0, h;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        add_key();
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (nkeys == 0 || rnd(2) == 0)
            add_key();
        else
            remove_key();
    }
    steps = 0;
    walk(root, &walked, &sum);
    h = height(root);
    printf("avl seed %s: keys %d walked %d height %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, h, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
