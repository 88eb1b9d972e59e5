/* qdtree.c: a point quad tree, the paper's running example (seed 002,
   Figure 1; seed 000, Figure 4.1) and the "Quad tree" of its evaluation
   (Table 3), with injectable faults, among them the paper's own.

   What it does: the tree covers the square [0, 1024) x [0, 1024); a leaf
   holds at most one point (a malloc'd struct pt), an internal node has
   exactly four children, one per quadrant (child[0] lower left, [1]
   lower right, [2] upper left, [3] upper right). Inserting a point into
   a leaf that already holds one splits the leaf (split(): four new
   children, the old point moves down) until the two points are apart.
   Deleting a point empties its leaf and collapses a node whose four
   children are leaves holding at most one point between them. The
   program inserts BASE (1000) distinct random points, then runs OPS
   (500) random operations: insert a new random point or delete a random
   present one. Each tree node is one malloc'd struct qdtree (new_node);
   the root is a global.

   C-points: MGTRACE_CPOINT("qdtree") at the start and at the end of
   qd_insert and qd_delete, as in the paper's Figure 1 (spec:
   qdtree.spec, which declares none).

   Usage: qdtree [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] qdtree.c

   Output (stdout): one line
       qdtree seed S: points N nodes M reached P checksum XXXXXXXX
   (points: present points; nodes: tree nodes allocated; reached: points
   found walking the tree from the root; checksum: a hash of them in
   walk order). With FAULT=k, stderr gets "FAULT k fired at op N"; a
   walk that meets a missing child, or more than 1e6 steps in one
   operation, stops the run ("giving up at op N", exit 3). With
   -DSELFCHECK, stderr gets "SELFCHECK VIOLATION at op N (where): ..."
   for each constraint of qdtree.spec broken at a C-point (first 20) and
   a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  split, line 458: the paper's fault (seed 002 Figure 1 line 40):
      while a node is split, its parent's child[0] (a sibling of the
      node) is set to NULL, so the parent has three children
      (X -> Y => X.OUTDEGREE == 4 broken for its three edges) and the
      sibling's subtree is cut off. From op 100.
   2  qd_delete, line 532: instead of emptying the leaf that holds the
      deleted point (leaf->point = NULL), the leaf's slot in its parent is
      set to NULL: the parent has three children. From op 200. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define SIZE 1024     /* the side of the square the tree covers */
#define MAXPOINTS 4096 /* at least MAXBASE + OPS */
#define MAXDEPTH 16

struct pt {
    int x, y;
};

struct qdtree {
    int posX, posY;
    int width, height;
    struct pt *point;
    struct qdtree *child[4];
};

static struct qdtree *root; /* the tree (outside the heap) */
static int nnodes;          /* tree nodes allocated */
static int npoints;         /* points present: px[i], py[i] */
static int px[MAXPOINTS], py[MAXPOINTS];
static unsigned char present[SIZE * SIZE / 8];

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

_Static_assert(MAXPOINTS >= MAXBASE + OPS, "the point arrays must hold every point");

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    int i;

    for (i = 0; i < 4; i++)
        slots[i] = ((struct qdtree *)p)->child[i];
}

/* selfcheck evaluates qdtree.spec: INDEGREE <= 1, no cycle, four
   children or none. */
static void
selfcheck(const char *where)
{
    int i;

    selfcheck_begin();
    graph_build(4, slots_of);
    for (i = 0; i < nlive; i++) {
        struct qdtree *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node (%d,%d,%d) has INDEGREE %d", x->posX,
                      x->posY, x->width, g_indeg[i]);
        if (g_outdeg[i] != 0 && g_outdeg[i] != 4)
            violation(where, "node (%d,%d,%d) has OUTDEGREE %d", x->posX,
                      x->posY, x->width, g_outdeg[i]);
    }
    if (!g_acyclic)
        violation(where, "the tree has a cycle");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("qdtree");                                           \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("qdtree")
#endif

static void
give_up(const char *why)
{
    fprintf(stderr, "giving up at op %d: %s\n", op_no, why);
    exit(3);
}

/* new_node allocates every node of the tree: the square of side width
   at (x, y), a leaf without a point. */
static struct qdtree *
new_node(int x, int y, int width)
{
    struct qdtree *n = malloc(sizeof(struct qdtree));
    int i;

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->posX = x;
    n->posY = y;
    n->width = width;
    n->height = width;
    n->point = NULL;
    for (i = 0; i < 4; i++)
        n->child[i] = NULL;
    nnodes++;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct qdtree *n)
{
    LIVE_DEL(n);
    nnodes--;
    free(n);
}

static struct pt *
new_point(int x, int y)
{
    struct pt *p = malloc(sizeof(struct pt));

    if (p == NULL) {
        perror("malloc");
        exit(1);
    }
    p->x = x;
    p->y = y;
    return p;
}

static int
is_leaf(const struct qdtree *n)
{
    return n->child[0] == NULL && n->child[1] == NULL && n->child[2] == NULL &&
           n->child[3] == NULL;
}

/* quadrant is the index of the child of n whose square holds (x, y). */
static int
quadrant(const struct qdtree *n, int x, int y)
{
    int half = n->width / 2;

    return (x >= n->posX + half) + 2 * (y >= n->posY + half);
}

/* split gives the leaf node (whose parent is parent, NULL for the root)
   four children and moves its point into the one whose square holds
   it. */
static void
split(struct qdtree *parent, struct qdtree *node)
{
    struct qdtree *temp;
    int i, half = node->width / 2;
    int q = quadrant(node, node->point->x, node->point->y);

    for (i = 0; i < 4; i++) {
        temp = new_node(node->posX + (i & 1) * half, node->posY + (i >> 1) * half,
                        half);
        node->child[i] = temp;
        if (i == q) {
            temp->point = node->point;
            node->point = NULL;
#if FAULT == 1
            if (parent != NULL && parent->child[0] != node && fault_fire(100)) FAULTY(parent->child[0], NULL); /* FAULT 1 */
#endif
        }
    }
    (void)parent;
}

/* qd_insert adds the point (x, y), which is not in the tree. */
__attribute__((noinline)) void
qd_insert(int x, int y)
{
    struct qdtree *parent = NULL, *n = root;

    CPOINT("insert begin");
    if (n == NULL) {
        root = n = new_node(0, 0, SIZE);
    } else {
        while (!is_leaf(n)) {
            step();
            parent = n;
            n = n->child[quadrant(n, x, y)];
            if (n == NULL)
                give_up("missing child");
        }
        while (n->point != NULL) {
            step();
            split(parent, n);
            parent = n;
            n = n->child[quadrant(n, x, y)];
        }
    }
    n->point = new_point(x, y);
    CPOINT("insert end");
}

/* collapsible says whether n's four children are leaves with at most one
   point between them. */
static int
collapsible(const struct qdtree *n)
{
    int i, points = 0;

    for (i = 0; i < 4; i++) {
        if (n->child[i] == NULL || !is_leaf(n->child[i]))
            return 0;
        points += n->child[i]->point != NULL;
    }
    return points <= 1;
}

/* qd_delete removes the point (x, y), which is in the tree, and
   collapses the nodes left with four leaf children holding at most one
   point. */
__attribute__((noinline)) void
qd_delete(int x, int y)
{
    struct qdtree *path[MAXDEPTH], *n = root, *c;
    struct pt *p;
    int depth = 0, i;

    CPOINT("delete begin");
    while (!is_leaf(n)) {
        step();
        if (depth == MAXDEPTH)
            give_up("tree too deep");
        path[depth++] = n;
        n = n->child[quadrant(n, x, y)];
        if (n == NULL)
            give_up("missing child");
    }
    p = n->point;
    if (p == NULL || p->x != x || p->y != y)
        give_up("point not found");
#if FAULT == 2
    if (depth > 0 && fault_fire(200)) FAULTY(path[depth - 1]->child[quadrant(path[depth - 1], x, y)], NULL); /* FAULT 2 */ else n->point = NULL;
#else
    n->point = NULL;
#endif
    free(p);
    while (depth > 0 && collapsible(path[depth - 1])) {
        step();
        n = path[--depth];
        for (i = 0; i < 4; i++) {
            c = n->child[i];
            if (c->point != NULL)
                n->point = c->point;
            n->child[i] = NULL;
            free_node(c);
        }
    }
    CPOINT("delete end");
}

static int
is_present(int x, int y)
{
    return present[(y * SIZE + x) / 8] >> ((y * SIZE + x) % 8) & 1;
}

static void
set_present(int x, int y, int on)
{
    unsigned char bit = (unsigned char)(1u << ((y * SIZE + x) % 8));

    if (on)
        present[(y * SIZE + x) / 8] |= bit;
    else
        present[(y * SIZE + x) / 8] &= (unsigned char)~bit;
}

/* add_point inserts a random point that is not in the tree yet. */
static void
add_point(void)
{
    int x, y;

    do {
        x = (int)rnd(SIZE);
        y = (int)rnd(SIZE);
    } while (is_present(x, y));
    set_present(x, y, 1);
    px[npoints] = x;
    py[npoints] = y;
    npoints++;
    qd_insert(x, y);
}

/* remove_point deletes a random point of the tree. */
static void
remove_point(void)
{
    int i = (int)rnd((unsigned)npoints), x = px[i], y = py[i];

    set_present(x, y, 0);
    npoints--;
    px[i] = px[npoints];
    py[i] = py[npoints];
    qd_delete(x, y);
}

/* walk visits the tree from n, counting points into *reached. */
static void
walk(const struct qdtree *n, int *reached, unsigned long *sum)
{
    int i;

    step();
    if (n->point != NULL) {
        ++*reached;
        *sum = *sum * 31 + (unsigned long)(n->point->x * SIZE + n->point->y);
    }
    for (i = 0; i < 4; i++)
        if (n->child[i] != NULL)
            walk(n->child[i], reached, sum);
}

int
main(int argc, char **argv)
{
    unsigned long sum = 0;
    int i, reached = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        add_point();
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (npoints == 0 || rnd(2) == 0)
            add_point();
        else
            remove_point();
    }
    steps = 0;
    if (root != NULL)
        walk(root, &reached, &sum);
    printf("qdtree seed %s: points %d nodes %d reached %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", npoints, nnodes, reached,
           sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
