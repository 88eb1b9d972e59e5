/* avl.c: an AVL tree, the "AVL tree" of seed 002's evaluation (Table 3),
   with injectable faults.

   What it does: the node is seed 002's struct avltree (a value and two
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
      (INDEGREE 2) and the left subtree is cut off. From op 300. */
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

/* ---- The suite's common part (the same in every program of ds/) ---- */

#define BASE 1000           /* default number of inserts that build it */
#define OPS 500             /* operations of the second phase, at most */
#define MAXBASE 3000        /* the largest base size accepted */
#define STEP_LIMIT 1000000L /* loop steps per operation before giving up */

static unsigned long long rng_state;
static int n_base = BASE; /* inserts that build the structure (argv[2]) */
static int n_ops = OPS;   /* operations of the second phase (argv[3]) */
static int op_no = -1;    /* -1 while the base is built, then 0 .. n_ops-1 */
static long steps;        /* loop steps in the current operation */

/* count_arg returns the argument arg, named what, a number from lo to hi,
   or stops the program with exit status 2. */
static int
count_arg(const char *arg, const char *what, long lo, long hi)
{
    char *end;
    long v = strtol(arg, &end, 10);

    if (end == arg || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "bad %s %s: want a number from %ld to %ld\n", what,
                arg, lo, hi);
        exit(2);
    }
    return (int)v;
}

/* parse_args reads the optional arguments SEED BASE OPS: SEED seeds the
   generator (default 1); BASE is the number of inserts that build the
   structure (default BASE, 2 to MAXBASE); OPS is the number of operations
   of the second phase (default and at most OPS: a run with fewer ends
   before a fault that looks from a later op can fire). */
static void
parse_args(int argc, char **argv)
{
    unsigned long long s = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;

    if (argc > 4) {
        fprintf(stderr, "usage: %s [SEED [BASE [OPS]]]\n", argv[0]);
        exit(2);
    }
    if (argc > 2)
        n_base = count_arg(argv[2], "BASE", 2, MAXBASE);
    if (argc > 3)
        n_ops = count_arg(argv[3], "OPS", 0, OPS);
    rng_state = s * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
    if (rng_state == 0)
        rng_state = 1;
}

/* rnd returns a pseudo-random number in [0, n) (xorshift64). */
static unsigned
rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)((rng_state >> 11) % n);
}

/* step counts one loop step (or recursive call); a corrupt structure can
   make a walk endless, so the run stops after STEP_LIMIT steps in one
   operation. */
static void
step(void)
{
    if (++steps > STEP_LIMIT) {
        fprintf(stderr, "giving up at op %d: more than %ld steps\n", op_no,
                STEP_LIMIT);
        exit(3);
    }
}

#if FAULT != 0
/* FAULTY(lvalue, value) is the injected wrong store. It is a volatile
   store so that the compiler keeps it on its own source line: it cannot
   merge it with the correct store of the other branch. */
#define FAULTY(lv, v) (*(__typeof__(lv) volatile *)&(lv) = (v))

static int fired_op = -1;

/* fault_fire says whether the injected fault fires now: true once, the
   first time it is asked at or after operation `at` of the second phase. */
static int
fault_fire(int at)
{
    if (op_no < at || fired_op >= 0)
        return 0;
    fired_op = op_no;
    fprintf(stderr, "FAULT %d fired at op %d\n", FAULT, op_no);
    return 1;
}
#endif

#ifdef SELFCHECK
/* The self-check (compiled in with -DSELFCHECK only): every node the
   program allocates is registered, and at each C-point selfcheck() builds
   the graph the checker sees (live nodes, pointer slots holding a live
   node's address) and evaluates the spec's constraints over it. */
#define MAXLIVE 4096
#define MAXSLOT 8
#define HSIZE 16384

static void *live[MAXLIVE];
static int nlive;
static void *hkey[HSIZE];
static int hval[HSIZE];
static int g_out[MAXLIVE][MAXSLOT]; /* slot s of node i: node index or -1 */
static int g_indeg[MAXLIVE], g_outdeg[MAXLIVE];
static int g_order[MAXLIVE]; /* topological order, parents first */
static int g_acyclic;
static int sc_points, sc_bad_points, sc_lines, sc_this_bad;

static void
live_add(void *p)
{
    if (nlive == MAXLIVE) {
        fprintf(stderr, "selfcheck: too many nodes\n");
        exit(4);
    }
    live[nlive++] = p;
}

static __attribute__((unused)) void
live_del(void *p)
{
    int i;

    for (i = nlive - 1; i >= 0; i--)
        if (live[i] == p) {
            live[i] = live[--nlive];
            return;
        }
}

static unsigned
hslot(const void *p)
{
    unsigned long long x = (unsigned long long)(uintptr_t)p;

    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 29;
    return (unsigned)x & (HSIZE - 1);
}

/* live_find returns the index of the live node that starts at p, or -1. */
static int
live_find(const void *p)
{
    unsigned h;

    if (p == NULL)
        return -1;
    for (h = hslot(p); hkey[h] != NULL; h = (h + 1) & (HSIZE - 1))
        if (hkey[h] == p)
            return hval[h];
    return -1;
}

/* graph_build makes the graph: get(node, slots) fills the node's nslot
   pointer slots in spec order. It counts degrees and sorts the nodes
   topologically (g_acyclic says whether that worked). */
static void
graph_build(int nslot, void (*get)(void *, void **))
{
    void *slots[MAXSLOT];
    int i, s, t, head = 0, tail = 0, deg[MAXLIVE];
    unsigned h;

    memset(hkey, 0, sizeof hkey);
    for (i = 0; i < nlive; i++) {
        for (h = hslot(live[i]); hkey[h] != NULL; h = (h + 1) & (HSIZE - 1))
            ;
        hkey[h] = live[i];
        hval[h] = i;
        g_indeg[i] = g_outdeg[i] = 0;
    }
    for (i = 0; i < nlive; i++) {
        get(live[i], slots);
        for (s = 0; s < nslot; s++) {
            t = live_find(slots[s]);
            g_out[i][s] = t;
            if (t >= 0) {
                g_outdeg[i]++;
                g_indeg[t]++;
            }
        }
    }
    for (i = 0; i < nlive; i++)
        if ((deg[i] = g_indeg[i]) == 0)
            g_order[tail++] = i;
    while (head < tail) {
        i = g_order[head++];
        for (s = 0; s < nslot; s++)
            if ((t = g_out[i][s]) >= 0 && --deg[t] == 0)
                g_order[tail++] = t;
    }
    g_acyclic = tail == nlive;
}

/* violation reports a broken constraint at the current C-point (the
   first 20 lines of the run are printed). */
static void
violation(const char *where, const char *fmt, ...)
{
    va_list ap;

    if (!sc_this_bad) {
        sc_this_bad = 1;
        sc_bad_points++;
    }
    if (sc_lines++ >= 20)
        return;
    fprintf(stderr, "SELFCHECK VIOLATION at op %d (%s): ", op_no, where);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void
selfcheck_begin(void)
{
    sc_points++;
    sc_this_bad = 0;
}

static void
selfcheck_summary(void)
{
    fprintf(stderr, "SELFCHECK: %d C-points, %d with violations\n",
            sc_points, sc_bad_points);
}

#define LIVE_ADD(p) live_add(p)
#define LIVE_DEL(p) live_del(p)
#else
#define LIVE_ADD(p) ((void)0)
#define LIVE_DEL(p) ((void)0)
#endif

/* ---- end of the common part ---- */

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
        n->left = ins(n->left, val);
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
