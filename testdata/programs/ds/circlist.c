/* circlist.c: a circular singly linked list without a sentinel, the
   "Circular linked list" of seed 002's evaluation (Table 3), with
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
      predecessors, q none. From op 300. */
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
