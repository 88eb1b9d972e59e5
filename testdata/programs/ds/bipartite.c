/* bipartite.c: a bipartite graph, the "Bipartite graph" of the fault-location paper's
   evaluation (Table 3), with injectable faults.

   What it does: BASE (1000) vertices, alternately on side 0 and side 1;
   each vertex keeps its neighbours in nbr[0 .. deg-1] (at most MAXDEG,
   8), and an edge is stored at both ends, so the graph is undirected and
   every edge joins the two sides. Building the base adds the vertices
   one by one, each with up to two edges to random vertices of the other
   side; then OPS (500) random operations insert an edge between random
   vertices of the two sides (when both have room and are not adjacent)
   or delete a random edge. Each vertex is one malloc'd struct vertex
   (new_vertex); the program reaches them through the global arrays
   side0 and side1.

   C-points: declared in bipartite.spec: CPOINT bp_add_vertex,
   bp_insert_edge and bp_delete_edge ENTRY/EXIT, and CPOINT
   bipartite.c:LINE for the line of main where the base is complete; the
   program has no MGTRACE_CPOINT.

   Usage: bipartite [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] bipartite.c

   Output (stdout): one line
       bipartite seed S: vertices N edges E checksum XXXXXXXX
   (edges: half the sum of the degrees; checksum: a hash of the
   adjacency lists). With FAULT=k, stderr gets "FAULT k fired at op N".
   With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION at op N (where):
   ..." for each constraint of bipartite.spec broken at a C-point (first
   20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  bp_insert_edge, line 422: the back edge v -> u is stored as v -> v
      (a typo): an edge inside one side (a self-loop), and u -> v has no
      edge back. From op 100.
   2  bp_insert_edge, line 416: the edge u -> v is stored as u -> w,
      where w is v's first neighbour, a vertex on u's own side: an edge
      inside one side, without an edge back, and v -> u has none either.
      From op 200. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define MAXDEG 8
#define MAXV 1500 /* vertices per side: MAXBASE / 2 */

struct vertex {
    int side;
    int id;
    int deg;
    struct vertex *nbr[MAXDEG];
};

static struct vertex *side0[MAXV], *side1[MAXV]; /* the graph */
static int n0, n1;                               /* vertices per side */
static int nbase;                                /* vertices in the base */

#include "suite.h" /* the suite's common part */

_Static_assert(2 * MAXV >= MAXBASE, "a side must hold half of the largest base");

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    int i;

    for (i = 0; i < MAXDEG; i++)
        slots[i] = ((struct vertex *)p)->nbr[i];
}

/* selfcheck evaluates bipartite.spec: an edge joins the two sides and
   has an edge back; OUTDEGREE == deg. */
static void
selfcheck(const char *where)
{
    int i, s, t, b;

    selfcheck_begin();
    graph_build(MAXDEG, slots_of);
    for (i = 0; i < nlive; i++) {
        struct vertex *x = live[i];

        if (g_outdeg[i] != x->deg)
            violation(where, "vertex %d has deg %d and OUTDEGREE %d", x->id,
                      x->deg, g_outdeg[i]);
        for (s = 0; s < MAXDEG; s++) {
            if ((t = g_out[i][s]) < 0)
                continue;
            if (((struct vertex *)live[t])->side == x->side)
                violation(where, "edge %d -> %d inside side %d", x->id,
                          ((struct vertex *)live[t])->id, x->side);
            for (b = 0; b < MAXDEG && g_out[t][b] != i; b++)
                ;
            if (b == MAXDEG)
                violation(where, "edge %d -> %d has no edge back", x->id,
                          ((struct vertex *)live[t])->id);
        }
    }
}
#define SC(where) selfcheck(where)
#else
#define SC(where) ((void)0)
#endif

/* new_vertex allocates every vertex of the graph. */
static struct vertex *
new_vertex(int side, int id)
{
    struct vertex *v = malloc(sizeof(struct vertex));
    int i;

    if (v == NULL) {
        perror("malloc");
        exit(1);
    }
    v->side = side;
    v->id = id;
    v->deg = 0;
    for (i = 0; i < MAXDEG; i++)
        v->nbr[i] = NULL;
    LIVE_ADD(v);
    return v;
}

static int
adjacent(const struct vertex *u, const struct vertex *v)
{
    int i;

    for (i = 0; i < u->deg; i++)
        if (u->nbr[i] == v)
            return 1;
    return 0;
}

/* bp_add_vertex adds a vertex without edges on the given side. */
__attribute__((noinline)) struct vertex *
bp_add_vertex(int side)
{
    struct vertex *v;

    SC("add-vertex entry");
    v = new_vertex(side, n0 + n1);
    if (side == 0)
        side0[n0++] = v;
    else
        side1[n1++] = v;
    SC("add-vertex exit");
    return v;
}

/* bp_insert_edge joins u and v, on different sides, when both have room
   and they are not adjacent yet. */
__attribute__((noinline)) void
bp_insert_edge(struct vertex *u, struct vertex *v)
{
    SC("insert entry");
    if (u->deg < MAXDEG && v->deg < MAXDEG && !adjacent(u, v)) {
#if FAULT == 2
        if (v->deg > 0 && fault_fire(200)) FAULTY(u->nbr[u->deg], v->nbr[0]); /* FAULT 2 */ else u->nbr[u->deg] = v;
#else
        u->nbr[u->deg] = v;
#endif
        u->deg++;
#if FAULT == 1
        if (fault_fire(100)) FAULTY(v->nbr[v->deg], v); /* FAULT 1 */ else v->nbr[v->deg] = u;
#else
        v->nbr[v->deg] = u;
#endif
        v->deg++;
    }
    SC("insert exit");
}

/* unlink removes v from u's neighbours, keeping them packed. */
static void
unlink_nbr(struct vertex *u, const struct vertex *v)
{
    int i;

    for (i = 0; i < u->deg && u->nbr[i] != v; i++)
        ;
    if (i == u->deg)
        return;
    u->nbr[i] = u->nbr[u->deg - 1];
    u->nbr[u->deg - 1] = NULL;
    u->deg--;
}

/* bp_delete_edge removes the edge between u and its i-th neighbour. */
__attribute__((noinline)) void
bp_delete_edge(struct vertex *u, int i)
{
    struct vertex *v = u->nbr[i];

    SC("delete entry");
    unlink_nbr(u, v);
    unlink_nbr(v, u);
    SC("delete exit");
}

/* random_edge_op inserts an edge between random vertices of the two
   sides, or deletes a random edge. */
static void
random_edge_op(void)
{
    struct vertex *u;

    if (rnd(2) == 0) {
        bp_insert_edge(side0[rnd((unsigned)n0)], side1[rnd((unsigned)n1)]);
        return;
    }
    do {
        step();
        u = rnd(2) ? side0[rnd((unsigned)n0)] : side1[rnd((unsigned)n1)];
    } while (u->deg == 0);
    bp_delete_edge(u, (int)rnd((unsigned)u->deg));
}

int
main(int argc, char **argv)
{
    struct vertex *v, **other;
    unsigned long sum = 0;
    int i, j, k, nother, degs = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        v = bp_add_vertex(i % 2);
        other = i % 2 ? side0 : side1;
        nother = i % 2 ? n0 : n1;
        for (k = 0; k < 2 && nother > 0; k++)
            bp_insert_edge(v, other[rnd((unsigned)nother)]);
    }
    nbase = n0 + n1; /* bipartite.spec: C-point, the base is complete */
    SC("base built");
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        random_edge_op();
    }
    for (i = 0; i < n0 + n1; i++) {
        v = i < n0 ? side0[i] : side1[i - n0];
        degs += v->deg;
        for (j = 0; j < v->deg && j < MAXDEG; j++)
            sum = sum * 31 + (unsigned long)(v->id * 4096 + (v->nbr[j] ? v->nbr[j]->id : 0));
    }
    printf("bipartite seed %s: vertices %d edges %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nbase, degs / 2, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the graph stays allocated: the end of the run is a C-point */
}
