/* btree.c: a B-tree of order 3 (a 2-3 tree), the "B tree" of seed 002's
   evaluation (Table 3) with its node (Example 4), with injectable faults.

   What it does: a node holds one or two keys (count) and, unless it is a
   leaf, count + 1 children; all leaves are at the same depth. Insert
   goes down to a leaf and splits full nodes on the way back up (a new
   root when the root splits). Delete removes the key from a leaf (a key
   of an internal node is first replaced by its predecessor) and fixes a
   node left without a key on the way back up: it borrows a key from a
   sibling with two, or merges with a sibling with one (the root goes
   when it has no key left). The program inserts BASE (1000) distinct
   random keys, then runs OPS (500) random operations: insert a new random
   key or delete a random present one. Each node is one malloc'd struct
   btree (new_node); the root is a global.

   C-points: MGTRACE_CPOINT("btree") at the start and at the end of
   bt_insert and bt_delete (spec: btree.spec, which declares none).

   Usage: btree [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] btree.c

   Output (stdout): one line
       btree seed S: keys N walked N nodes M checksum XXXXXXXX
   (keys: keys present; walked: keys met walking the tree from the root;
   nodes: nodes allocated; checksum: a hash of the keys in order). With
   FAULT=k, stderr gets "FAULT k fired at op N"; more than 1e6 steps in
   one operation, or a key not found where it must be, stop the run
   ("giving up at op N", exit 3). With -DSELFCHECK, stderr gets
   "SELFCHECK VIOLATION at op N (where): ..." for each constraint of
   btree.spec broken at a C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  ins, line 446: when an internal node splits, the new right node's
      first child is the node's second child instead of its third: that
      child has two parents (INDEGREE == 1 broken), the third is cut off.
      From op 100.
   2  ins, line 425: when an internal node gains a key from a child's
      split, its count goes up by two instead of one: three children for
      a count of 3 (OUTDEGREE == count + 1 broken). From op 200.
   3  fix, line 489: when an internal node borrows from its left
      sibling, it takes the sibling's second child instead of its third:
      that child has two parents, the third is cut off. From op 300. */
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

struct btree {
    int count;
    int key[2];
    struct btree *child[3];
};

static struct btree *root; /* the tree (outside the heap) */
static int nnodes;         /* nodes allocated */
static int nkeys;          /* keys present: keys[i] */
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
    int i;

    for (i = 0; i < 3; i++)
        slots[i] = ((struct btree *)p)->child[i];
}

/* selfcheck evaluates btree.spec: INDEGREE <= 1, no cycle, an internal
   node has 2 or 3 children and count + 1 of them. */
static void
selfcheck(const char *where)
{
    int i;

    selfcheck_begin();
    graph_build(3, slots_of);
    for (i = 0; i < nlive; i++) {
        struct btree *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node [%d] has INDEGREE %d", x->key[0],
                      g_indeg[i]);
        if (g_outdeg[i] != 0 &&
            (g_outdeg[i] < 2 || g_outdeg[i] > 3 || g_outdeg[i] != x->count + 1))
            violation(where, "node [%d] has count %d and OUTDEGREE %d",
                      x->key[0], x->count, g_outdeg[i]);
    }
    if (!g_acyclic)
        violation(where, "the tree has a cycle");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("btree");                                            \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("btree")
#endif

static void
give_up(const char *why)
{
    fprintf(stderr, "giving up at op %d: %s\n", op_no, why);
    exit(3);
}

/* new_node allocates every node of the tree: one key, no children. */
static struct btree *
new_node(int key)
{
    struct btree *n = malloc(sizeof(struct btree));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->count = 1;
    n->key[0] = key;
    n->key[1] = 0;
    n->child[0] = NULL;
    n->child[1] = NULL;
    n->child[2] = NULL;
    nnodes++;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct btree *n)
{
    LIVE_DEL(n);
    nnodes--;
    free(n);
}

/* ins inserts key into the subtree n. When n splits, it returns 1 and
   sets *up to the key that moves up and *right to n's new right
   sibling. */
static int
ins(struct btree *n, int key, int *up, struct btree **right)
{
    struct btree *r = NULL, *nr, *cc[4];
    int i = 0, k = key, kk[3], j;

    step();
    while (i < n->count && n->key[i] < key)
        i++;
    if (n->child[0] != NULL && !ins(n->child[i], key, &k, &r))
        return 0;
    /* k (with r, its right child, unless n is a leaf) goes in at i */
    if (n->count == 1) {
        if (i == 0) {
            n->key[1] = n->key[0];
            n->child[2] = n->child[1];
            n->key[0] = k;
            n->child[1] = r;
        } else {
            n->key[1] = k;
            n->child[2] = r;
        }
#if FAULT == 2
        if (r != NULL && fault_fire(200)) FAULTY(n->count, n->count + 2); /* FAULT 2 */ else n->count++;
#else
        n->count++;
#endif
        return 0;
    }
    /* n is full: three keys, four children; n keeps the first key and
       the first two children, the second key goes up, a new node nr
       takes the third key and the last two children */
    for (j = 0; j < 3; j++)
        kk[j] = j < i ? n->key[j] : j == i ? k : n->key[j - 1];
    for (j = 0; j < 4; j++)
        cc[j] = j <= i ? n->child[j] : j == i + 1 ? r : n->child[j - 1];
    nr = new_node(kk[2]);
    n->count = 1;
    n->key[0] = kk[0];
    n->key[1] = 0;
    n->child[0] = cc[0];
    n->child[1] = cc[1];
    n->child[2] = NULL;
#if FAULT == 1
    if (cc[1] != NULL && fault_fire(100)) FAULTY(nr->child[0], cc[1]); /* FAULT 1 */ else nr->child[0] = cc[2];
#else
    nr->child[0] = cc[2];
#endif
    nr->child[1] = cc[3];
    *up = kk[1];
    *right = nr;
    return 1;
}

/* bt_insert adds key, which is not in the tree. */
__attribute__((noinline)) void
bt_insert(int key)
{
    struct btree *r, *nr;
    int k;

    CPOINT("insert begin");
    if (root == NULL) {
        root = new_node(key);
    } else if (ins(root, key, &k, &r)) {
        nr = new_node(k);
        nr->child[0] = root;
        nr->child[1] = r;
        root = nr;
    }
    CPOINT("insert end");
}

/* fix repairs n's child i, left without a key (and with one child unless
   it is a leaf). It returns 1 when n is left without a key in turn. */
static int
fix(struct btree *n, int i)
{
    struct btree *c = n->child[i], *s;
    int j;

    if (i > 0 && n->child[i - 1]->count == 2) {
        /* borrow from the left sibling */
        s = n->child[i - 1];
        c->key[0] = n->key[i - 1];
        c->child[1] = c->child[0];
#if FAULT == 3
        if (s->child[1] != NULL && fault_fire(300)) FAULTY(c->child[0], s->child[1]); /* FAULT 3 */ else c->child[0] = s->child[2];
#else
        c->child[0] = s->child[2];
#endif
        s->child[2] = NULL;
        n->key[i - 1] = s->key[1];
        s->count = 1;
        c->count = 1;
        return 0;
    }
    if (i < n->count && n->child[i + 1]->count == 2) {
        /* borrow from the right sibling */
        s = n->child[i + 1];
        c->key[0] = n->key[i];
        c->child[1] = s->child[0];
        n->key[i] = s->key[0];
        s->key[0] = s->key[1];
        s->child[0] = s->child[1];
        s->child[1] = s->child[2];
        s->child[2] = NULL;
        s->count = 1;
        c->count = 1;
        return 0;
    }
    if (i > 0) {
        /* merge c into its left sibling, which has one key */
        s = n->child[i - 1];
        s->key[1] = n->key[i - 1];
        s->child[2] = c->child[0];
        s->count = 2;
        for (j = i; j < n->count; j++) {
            n->key[j - 1] = n->key[j];
            n->child[j] = n->child[j + 1];
        }
        n->child[n->count] = NULL;
        n->count--;
        free_node(c);
    } else {
        /* merge the right sibling, which has one key, into c */
        s = n->child[1];
        c->key[0] = n->key[0];
        c->key[1] = s->key[0];
        c->child[1] = s->child[0];
        c->child[2] = s->child[1];
        c->count = 2;
        for (j = 1; j < n->count; j++) {
            n->key[j - 1] = n->key[j];
            n->child[j] = n->child[j + 1];
        }
        n->child[n->count] = NULL;
        n->count--;
        free_node(s);
    }
    return n->count == 0;
}

/* del removes key from the subtree n. It returns 1 when n is left
   without a key, for its parent to fix. */
static int
del(struct btree *n, int key)
{
    struct btree *p;
    int i = 0;

    step();
    while (i < n->count && n->key[i] < key)
        i++;
    if (n->child[0] == NULL) {
        if (i == n->count || n->key[i] != key)
            give_up("key not found");
        if (i == 0 && n->count == 2)
            n->key[0] = n->key[1];
        n->count--;
        return n->count == 0;
    }
    if (i < n->count && n->key[i] == key) {
        /* an internal key: replace it by its predecessor, the largest key
           of child i, and delete that one from child i */
        for (p = n->child[i]; p->child[0] != NULL; p = p->child[p->count])
            step();
        key = p->key[p->count - 1];
        n->key[i] = key;
    }
    return del(n->child[i], key) && fix(n, i);
}

/* bt_delete removes key, which is in the tree. */
__attribute__((noinline)) void
bt_delete(int key)
{
    struct btree *old;

    CPOINT("delete begin");
    if (del(root, key)) {
        old = root;
        root = root->child[0];
        free_node(old);
    }
    CPOINT("delete end");
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
    bt_insert(k);
}

static void
remove_key(void)
{
    int i = (int)rnd((unsigned)nkeys), k = keys[i];

    present[k / 8] &= (unsigned char)~(1u << (k % 8));
    keys[i] = keys[--nkeys];
    bt_delete(k);
}

static void
walk(const struct btree *n, int *walked, unsigned long *sum)
{
    int i;

    if (n == NULL)
        return;
    step();
    for (i = 0; i < n->count && i < 2; i++) {
        walk(n->child[i], walked, sum);
        ++*walked;
        *sum = *sum * 31 + (unsigned long)n->key[i];
    }
    walk(n->child[i], walked, sum);
}

int
main(int argc, char **argv)
{
    unsigned long sum = 0;
    int i, walked = 0;

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
    printf("btree seed %s: keys %d walked %d nodes %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, nnodes,
           sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
