/* qdtree.c: a point quad tree, the paper's running example (the fault-location paper,
   Figure 1; Singh's dissertation, Figure 4.1) and the "Quad tree" of its evaluation
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
   1  split, line 458: the paper's fault (the fault-location paper Figure 1 line 40):
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

#include "suite.h" /* the suite's common part */

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
