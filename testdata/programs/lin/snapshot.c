/* snapshot.c: the pair snapshot of Chen, Zhang, Wu and Zhang, "Automatic
   Localization of Linearizability Faults": two integer cells, a write of
   one cell, and a read that returns both cells as they were at one moment.

   Exercises: a linearizability fault that needs an ABA pattern of values
   to show. The FAULTY build's snap_read is the paper's: it reads d[0],
   then d[1], and accepts the pair when d[0] reads the same as before,
   which a writer can defeat by changing d[0] and changing it back. The
   correct build keeps a version number that every write makes odd while
   it runs and even again after it (a sequence lock, one writer at a time),
   and a read accepts its pair only when the version was even and did not
   change. Operations, as analyze lin sees them (snapshot.lin):
       void snap_write(struct snap *s, int i, int v)   write([i v])
       void snap_read(struct snap *s, int out[2])      read() -> [out[0] out[1]]
   The main thread writes the initial <1,1> through snap_write before the
   workers start (so the history holds it), and reads once after joining
   them.

   Usage: snapshot bad | snapshot seed N   (see linsched.h)
   bad: the run of the paper's figures 3 and 4, with the paper's thread 1
   as thread t2 (the first worker) and its thread 2 as t3. t2 writes
   (0,2), (1,2), (1,1), (0,1) in turn; t3 reads once. t3's x = d[0] comes
   before write(0,2), its y = d[1] after write(1,2) and before
   write(1,1), and its check of d[0] after write(0,1): the FAULTY read
   returns <1,2>, a state the cells never had:
       t3 read -> [1 2] @4-13
   (the correct read sees the version move, retries and returns [1 1]).
   seed N: t2 writes (0,2), (1,2), (1,1), (0,1), (0,3), (1,3); t3 and t4
   read three times each.

   Output (stdout): "snapshot BUILD MODE", then one line per operation in
   call order, "WHO write I V -> ok @C-R" or "WHO read -> [X Y] @C-R"
   (linsched.h). Exit status 0, the FAULTY build too: the wrong answer is
   for the linearizability checker to find. */
#include "linsched.h"

struct snap {
    atomic_int d[2];
    atomic_uint version; /* odd while a write runs (correct build) */
};

/* Schedule points of snap_read. */
enum { P_X = 1, P_Y, P_CHECK };

LIN_OPFN void
snap_write(struct snap *s, int i, int v)
{
#ifdef FAULTY
    atomic_store(&s->d[i], v); /* the paper's write */
#else
    unsigned ver = atomic_load(&s->version);
    /* One writer at a time: move the version from even to odd. */
    while ((ver & 1) || !atomic_compare_exchange_weak(&s->version, &ver, ver + 1)) {
        sched_yield();
        ver = atomic_load(&s->version);
    }
    atomic_store(&s->d[i], v);
    atomic_store(&s->version, ver + 2);
#endif
}

LIN_OPFN void
snap_read(struct snap *s, int out[2])
{
    int x, y;

    for (;;) {
#ifndef FAULTY
        unsigned ver = atomic_load(&s->version);
        if (ver & 1) {
            sched_yield(); /* a write is under way */
            continue;
        }
#endif
        LIN_POINT(P_X);
        x = atomic_load(&s->d[0]);
        LIN_POINT(P_Y);
        y = atomic_load(&s->d[1]);
        LIN_POINT(P_CHECK);
#ifdef FAULTY
        if (x == atomic_load(&s->d[0])) /* FAULT: ABA: d[0] may have changed and changed back */
            break;
#else
        if (atomic_load(&s->version) == ver)
            break;
#endif
    }
    out[0] = x;
    out[1] = y;
}

static struct snap snap;

enum { WRITE, READ };

static void
run(struct lin_op *op)
{
    if (op->kind == WRITE)
        snap_write(&snap, op->arg[0], op->arg[1]);
    else
        snap_read(&snap, op->res);
}

static void
format(const struct lin_op *op, char *buf, size_t size)
{
    if (op->kind == WRITE)
        snprintf(buf, size, "write %d %d -> ok", op->arg[0], op->arg[1]);
    else
        snprintf(buf, size, "read -> [%d %d]", op->res[0], op->res[1]);
}

#define W(i, v) { WRITE, { i, v }, { 0, 0 }, 0, 0, 0 }
#define R { READ, { 0, 0 }, { 0, 0 }, 0, 0, 0 }

static struct lin_list bad_lists[] = {
    { 4, { W(0, 2), W(1, 2), W(1, 1), W(0, 1) } },
    { 1, { R } },
};

/* The paper's figure 4: t3's read interleaved with t2's four writes. */
static const struct lin_gate bad_gates[] = {
    { 3, LIN_BEGIN, 1 }, /* t3 calls snap_read */
    { 3, P_X, 1 },       /* x = d[0] (1) */
    { 2, LIN_BEGIN, 1 }, /* write(0, 2) */
    { 2, LIN_BEGIN, 2 }, /* write(1, 2) */
    { 3, P_Y, 1 },       /* y = d[1] (2) */
    { 2, LIN_BEGIN, 3 }, /* write(1, 1) */
    { 2, LIN_BEGIN, 4 }, /* write(0, 1); t2 then exits */
    { 3, P_CHECK, 1 },   /* d[0] == x again: the FAULTY read returns <1,2> */
};

static struct lin_list seed_lists[] = {
    { 6, { W(0, 2), W(1, 2), W(1, 1), W(0, 1), W(0, 3), W(1, 3) } },
    { 3, { R, R, R } },
    { 3, { R, R, R } },
};

int
main(int argc, char **argv)
{
    int mode = lin_args(argc, argv, "snapshot", run);

    lin_main_op(WRITE, 0, 1);
    lin_main_op(WRITE, 1, 1);
    if (mode == LIN_MODE_BAD)
        lin_run(bad_lists, 2, bad_gates, sizeof bad_gates / sizeof bad_gates[0]);
    else
        lin_run(seed_lists, 3, NULL, 0);
    lin_main_op(READ, 0, 0);
    lin_print(format);
    return 0;
}
