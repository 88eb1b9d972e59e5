/* ordlist.c: an ordered (sorted, singly linked) list, the "Ordered list"
   of seed 002's evaluation (Table 3), with injectable faults.

   What it does: builds a list of BASE (1000) random keys by sorted
   inserts, then runs OPS (500) random operations: insert a random key
   (duplicates allowed; the new node goes before the first node whose key
   is not smaller) or delete the node at a random position. Each node is
   one malloc'd struct ordnode (new_node); the head is a global. Keys are
   in [0, 10000).

   C-points: MGTRACE_CPOINT("ordnode") at the start and at the end of
   ol_insert and ol_delete (spec: ordlist.spec, which declares none).

   Usage: ordlist [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] ordlist.c

   Output (stdout): one line
       ordlist seed S: count N walked N checksum XXXXXXXX
   (count is the program's node count, walked the nodes reached from the
   head, checksum a hash of the keys in list order). With FAULT=k, stderr
   gets "FAULT k fired at op N". A walk longer than 1e6 steps in one
   operation (a cycle) stops the run: "giving up at op N", exit 3.
   With -DSELFCHECK, stderr gets a line "SELFCHECK VIOLATION at op N
   (where): ..." for each constraint of ordlist.spec broken at a C-point
   (first 20), and a summary line at the end.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is the line marked
   with the comment FAULT k):
   1  ol_insert, line 392: the new node's next skips its successor
      (n->next = cur->next instead of cur), so cur->next has two
      predecessors (cur, now unreachable, and n): INDEGREE == 1 broken.
      From op 100.
   2  ol_insert, line 394: the new node's next points back at its
      predecessor (n->next = prev): a cycle prev -> n -> prev, the order
      n -> prev broken, prev has two predecessors. From op 200; the next
      walk then loops and the run gives up.
   3  ol_delete, line 418: unlinking skips one node too many
      (prev->next = victim->next->next): the skipped node, now
      unreachable, and prev both point to the node after it (INDEGREE
      2). From op 300. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 10000

struct ordnode {
    int key;
    struct ordnode *next;
};

static struct ordnode *head; /* the list (outside the heap) */
static int count;            /* nodes in the list */

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
    slots[0] = ((struct ordnode *)p)->next;
}

/* selfcheck evaluates ordlist.spec: order along edges, INDEGREE <= 1,
   no cycle. */
static void
selfcheck(const char *where)
{
    int i, t;

    selfcheck_begin();
    graph_build(1, slots_of);
    for (i = 0; i < nlive; i++) {
        struct ordnode *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node key %d has INDEGREE %d", x->key,
                      g_indeg[i]);
        if ((t = g_out[i][0]) >= 0 && x->key > ((struct ordnode *)live[t])->key)
            violation(where, "edge %d -> %d out of order", x->key,
                      ((struct ordnode *)live[t])->key);
    }
    if (!g_acyclic)
        violation(where, "the list has a cycle");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("ordnode");                                          \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("ordnode")
#endif

/* new_node allocates every node of the list. */
static struct ordnode *
new_node(int key)
{
    struct ordnode *n = malloc(sizeof(struct ordnode));

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
free_node(struct ordnode *n)
{
    LIVE_DEL(n);
    free(n);
}

/* ol_insert links a new node with key before the first node whose key is
   not smaller. */
__attribute__((noinline)) void
ol_insert(int key)
{
    struct ordnode *n, *prev = NULL, *cur = head;

    CPOINT("insert begin");
    n = new_node(key);
    while (cur != NULL && cur->key < key) {
        step();
        prev = cur;
        cur = cur->next;
    }
    if (prev == NULL)
        head = n;
    else
        prev->next = n;
#if FAULT == 1
    if (cur != NULL && cur->next != NULL && fault_fire(100)) FAULTY(n->next, cur->next); /* FAULT 1 */ else n->next = cur;
#elif FAULT == 2
    if (prev != NULL && fault_fire(200)) FAULTY(n->next, prev); /* FAULT 2 */ else n->next = cur;
#else
    n->next = cur;
#endif
    count++;
    CPOINT("insert end");
}

/* ol_delete unlinks and frees the node at position pos (0 is the head). */
__attribute__((noinline)) void
ol_delete(int pos)
{
    struct ordnode *prev = NULL, *victim = head;

    CPOINT("delete begin");
    while (pos-- > 0 && victim->next != NULL) {
        step();
        prev = victim;
        victim = victim->next;
    }
    if (prev == NULL) {
        head = victim->next;
    } else {
#if FAULT == 3
        if (victim->next != NULL && victim->next->next != NULL && fault_fire(300)) FAULTY(prev->next, victim->next->next); /* FAULT 3 */ else prev->next = victim->next;
#else
        prev->next = victim->next;
#endif
    }
    free_node(victim);
    count--;
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct ordnode *n;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        ol_insert((int)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            ol_insert((int)rnd(KEYS));
        else
            ol_delete((int)rnd((unsigned)count));
    }
    steps = 0;
    for (n = head; n != NULL; n = n->next) {
        step();
        sum = sum * 31 + (unsigned long)n->key;
        walked++;
    }
    printf("ordlist seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
