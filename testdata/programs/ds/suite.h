/* suite.h: the part every program of testdata/programs/ds/ shares,
   included by each of them just after its node structs: the argument
   parser (SEED BASE OPS), the xorshift generator, step() (the loop-step
   guard), fault_fire() and FAULTY (the injected faults: see README.md),
   and, with -DSELFCHECK, the self-check's graph support. It holds
   definitions, not just declarations: include it from one file only. */
#ifndef DS_SUITE_H
#define DS_SUITE_H


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

#endif /* DS_SUITE_H */
