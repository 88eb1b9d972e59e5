/* bipartite.c: a bipartite graph, the "Bipartite graph" of seed 002's
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
