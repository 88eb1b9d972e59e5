/* rbtree.c: a red-black tree, the "Red-Black tree" of seed 002's
   evaluation (Table 3), with injectable faults.

   What it does: a left-leaning red-black tree (Sedgewick's LLRB: the
   recursive insert and delete, rotations and color flips, no parent
   pointers), whose node is seed 002's struct rbtree (color, right, left)
   with a key after them. At every C-point the root is black, a red node
   has black children, and every path from a node down to a NULL child
   meets the same number of black nodes. The program inserts BASE (1000)
   distinct random keys, then runs OPS (500) random operations: insert a
   new random key or delete a random present one. Each node is one
   malloc'd struct rbtree (new_node); the root is a global.

   C-points: declared in rbtree.spec (CPOINT rb_insert ENTRY/EXIT, CPOINT
   rb_delete ENTRY/EXIT); the program has no MGTRACE_CPOINT.

   Usage: rbtree [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] rbtree.c

   Output (stdout): one line
       rbtree seed S: keys N walked N black-height B checksum XXXXXXXX
   (keys: keys present; walked: nodes met walking the tree from the root;
   black-height: black nodes on the leftmost path; checksum: a hash of
   the keys in order). With FAULT=k, stderr gets "FAULT k fired at op
   N"; more than 1e6 steps in one operation stop the run ("giving up at
   op N", exit 3). With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION at
   op N (where): ..." for each constraint of rbtree.spec broken at a
   C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  rotate_left, line 405: the rotated node h takes x->right instead of
      x->left as its right child: that subtree has two parents (INDEGREE
      == 1 broken), x's left subtree is cut off. From op 100.
   2  rotate_right, line 421: the mirror image: h takes x->left instead
      of x->right as its left child. From op 200.
   3  rb_insert, line 472: the last store of the insert paints the root
      RED instead of BLACK (the root must be black). From op 300. */
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
#define RED 0
#define BLACK 1

struct rbtree {
    int color;
    struct rbtree *right, *left;
    int key;
};

static struct rbtree *root; /* the tree (outside the heap) */
static int nkeys;           /* keys present: keys[i] */
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
    slots[0] = ((struct rbtree *)p)->right;
    slots[1] = ((struct rbtree *)p)->left;
}

/* selfcheck evaluates rbtree.spec: INDEGREE <= 1, no cycle, a black
   root, black children of red nodes, equal black heights (BHEIGHT: -1
   for NULL, one more than the right child's for a black node, the same
   for a red one) of the two children. */
static void
selfcheck(const char *where)
{
    static int bh[MAXLIVE];
    int i, k, s, br, bl;

    selfcheck_begin();
    graph_build(2, slots_of);
    for (i = 0; i < nlive; i++) {
        struct rbtree *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node %d has INDEGREE %d", x->key, g_indeg[i]);
        if (g_indeg[i] == 0 && x->color != BLACK)
            violation(where, "root %d is not black", x->key);
        for (s = 0; s < 2; s++)
            if (x->color == RED && g_out[i][s] >= 0 &&
                ((struct rbtree *)live[g_out[i][s]])->color != BLACK)
                violation(where, "red node %d has a red child", x->key);
    }
    if (!g_acyclic) {
        violation(where, "the tree has a cycle");
        return;
    }
    for (k = nlive - 1; k >= 0; k--) { /* children before parents */
        i = g_order[k];
        br = g_out[i][0] >= 0 ? bh[g_out[i][0]] : -1;
        bl = g_out[i][1] >= 0 ? bh[g_out[i][1]] : -1;
        bh[i] = br + (((struct rbtree *)live[i])->color == BLACK);
        if (br != bl)
            violation(where, "node %d: right BHEIGHT %d, left BHEIGHT %d",
                      ((struct rbtree *)live[i])->key, br, bl);
    }
}
#define SC(where) selfcheck(where)
#else
#define SC(where) ((void)0)
#endif

/* new_node allocates every node of the tree, red. */
static struct rbtree *
new_node(int key)
{
    struct rbtree *n = malloc(sizeof(struct rbtree));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->color = RED;
    n->right = NULL;
    n->left = NULL;
    n->key = key;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct rbtree *n)
{
    LIVE_DEL(n);
    free(n);
}

static int
is_red(const struct rbtree *h)
{
    return h != NULL && h->color == RED;
}

static struct rbtree *
rotate_left(struct rbtree *h)
{
    struct rbtree *x = h->right;

#if FAULT == 1
    if (x->right != NULL && fault_fire(100)) FAULTY(h->right, x->right); /* FAULT 1 */ else h->right = x->left;
#else
    h->right = x->left;
#endif
    x->left = h;
    x->color = h->color;
    h->color = RED;
    return x;
}

static struct rbtree *
rotate_right(struct rbtree *h)
{
    struct rbtree *x = h->left;

#if FAULT == 2
    if (x->left != NULL && fault_fire(200)) FAULTY(h->left, x->left); /* FAULT 2 */ else h->left = x->right;
#else
    h->left = x->right;
#endif
    x->right = h;
    x->color = h->color;
    h->color = RED;
    return x;
}

static void
flip_colors(struct rbtree *h)
{
    h->color = !h->color;
    h->left->color = !h->left->color;
    h->right->color = !h->right->color;
}

/* balance restores the left-leaning invariants at h on the way up. */
static struct rbtree *
balance(struct rbtree *h)
{
    if (is_red(h->right) && !is_red(h->left))
        h = rotate_left(h);
    if (is_red(h->left) && is_red(h->left->left))
        h = rotate_right(h);
    if (is_red(h->left) && is_red(h->right))
        flip_colors(h);
    return h;
}

static struct rbtree *
ins(struct rbtree *h, int key)
{
    step();
    if (h == NULL)
        return new_node(key);
    if (key < h->key)
        h->left = ins(h->left, key);
    else if (key > h->key)
        h->right = ins(h->right, key);
    return balance(h);
}

/* rb_insert adds key, which is not in the tree. */
__attribute__((noinline)) void
rb_insert(int key)
{
    SC("insert entry");
    root = ins(root, key);
#if FAULT == 3
    if (root->color == BLACK && fault_fire(300)) FAULTY(root->color, RED); /* FAULT 3 */ else root->color = BLACK;
#else
    root->color = BLACK;
#endif
    SC("insert exit");
}

static struct rbtree *
move_red_left(struct rbtree *h)
{
    flip_colors(h);
    if (is_red(h->right->left)) {
        h->right = rotate_right(h->right);
        h = rotate_left(h);
        flip_colors(h);
    }
    return h;
}

static struct rbtree *
move_red_right(struct rbtree *h)
{
    flip_colors(h);
    if (is_red(h->left->left)) {
        h = rotate_right(h);
        flip_colors(h);
    }
    return h;
}

static struct rbtree *
delete_min(struct rbtree *h)
{
    step();
    if (h->left == NULL) {
        free_node(h);
        return NULL;
    }
    if (!is_red(h->left) && !is_red(h->left->left))
        h = move_red_left(h);
    h->left = delete_min(h->left);
    return balance(h);
}

static struct rbtree *
del(struct rbtree *h, int key)
{
    struct rbtree *m;

    step();
    if (key < h->key) {
        if (!is_red(h->left) && !is_red(h->left->left))
            h = move_red_left(h);
        h->left = del(h->left, key);
    } else {
        if (is_red(h->left))
            h = rotate_right(h);
        if (key == h->key && h->right == NULL) {
            free_node(h);
            return NULL;
        }
        if (!is_red(h->right) && !is_red(h->right->left))
            h = move_red_right(h);
        if (key == h->key) {
            for (m = h->right; m->left != NULL; m = m->left)
                step();
            h->key = m->key;
            h->right = delete_min(h->right);
        } else {
            h->right = del(h->right, key);
        }
    }
    return balance(h);
}

/* rb_delete removes key, which is in the tree. */
__attribute__((noinline)) void
rb_delete(int key)
{
    SC("delete entry");
    if (!is_red(root->left) && !is_red(root->right))
        root->color = RED;
    root = del(root, key);
    if (root != NULL)
        root->color = BLACK;
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
    rb_insert(k);
}

static void
remove_key(void)
{
    int i = (int)rnd((unsigned)nkeys), k = keys[i];

    present[k / 8] &= (unsigned char)~(1u << (k % 8));
    keys[i] = keys[--nkeys];
    rb_delete(k);
}

static void
walk(const struct rbtree *n, int *walked, unsigned long *sum)
{
    if (n == NULL)
        return;
    step();
    walk(n->left, walked, sum);
    ++*walked;
    *sum = *sum * 31 + (unsigned long)n->key;
    walk(n->right, walked, sum);
}

int
main(int argc, char **argv)
{
    const struct rbtree *n;
    unsigned long sum = 0;
    int i, walked = 0, bh = 0;

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
    for (n = root; n != NULL; n = n->left) {
        step();
        bh += n->color == BLACK;
    }
    printf("rbtree seed %s: keys %d walked %d black-height %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, bh, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
