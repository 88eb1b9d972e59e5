/* linsched.h: the harness of the linearizability test programs in
   testdata/programs/lin (lockqueue.c, msqueue.c, treiber.c, lfset.c,
   snapshot.c).

   Each program defines a concurrent data structure whose operations are
   functions marked LIN_OPFN (never inlined, never cloned), so that a
   trace records one call and one return per operation. The harness runs
   worker threads, each through its own list of operations, and makes
   their interleaving happen on purpose through schedule points: the data
   structure's code calls LIN_POINT(p) at the places where another thread
   may usefully run (between reading a shared pointer and the
   compare-and-swap that relies on it, say), and the harness passes point
   LIN_BEGIN before each operation.

   Usage of a program built on this header:
       PROG bad       the deterministic schedule that exposes the FAULTY
                      build's bug (the correct build runs it too, and stays
                      linearizable)
       PROG seed N    1 <= N <= 1000000: no schedule; at every point a
                      thread yields 0 to 3 times, as a per-thread linear
                      congruential generator seeded from N decides
       PROG free      no schedule and no yields: the points do nothing,
                      and the interleaving is the scheduler's (under
                      record, --preempt and --sched-seed choose it)
   Output: a first line "PROG BUILD MODE" (BUILD is correct or faulty,
   MODE is "bad", "seed N" or "free"), then one line per operation, in the order
   of their calls:
       WHO NAME [ARG...] -> RESULT @CALL-RETURN
   WHO is tN, thread N as a trace numbers it: t1 is the main thread (its
   operations come before the workers start or after they have been
   joined), t2, t3, ... the workers in the order they were created. CALL
   and RETURN are the values of a global counter taken just before the
   call and just after the return, so overlapping operations have
   overlapping CALL-RETURN intervals. A bad
   argument prints the usage on stderr and exits with status 2; a schedule
   wait that gave up (never, unless a schedule is wrong) prints a line
   starting with "linsched:" on stderr.

   The deterministic schedule (mode bad) is a list of gates
   {thread, point, nth}: "thread T's nth arrival at point P", with T
   numbered as above (2 is the first worker). The gates are passed one at
   a time, in the order of the list, and a thread that passed a gate keeps
   the turn until it arrives at its next gate, or exits: then the next
   gate in the list may be passed. So, once every worker has reached its
   first gate, exactly one worker runs at a time and the whole
   interleaving is fixed by the list, natively and under Valgrind. A
   thread waits for its gate on a condition variable (a futex): a blocking
   system call, at which Valgrind, which runs one thread at a time, hands
   the CPU to another thread, and which natively leaves the CPU to the
   thread that has the turn instead of competing with it for a loaded
   machine's time. Nothing depends on time, and no thread sleeps to let
   another go first.

   A schedule is written for the FAULTY build; the correct build may take
   other paths (a failed compare-and-swap retries and reaches a point once
   more, an operation that fails early never reaches a later point). The
   gates stay safe: a gate its thread skips past (the thread arrives at a
   later gate of its own first) or never reaches (the thread exits) is
   void, and the step moves over void gates, so no thread waits for an
   arrival that cannot come. Points must not sit inside a critical section
   (a mutex held at the point) or inside code that another thread waits
   on: a thread waiting at a gate must hold nothing the running thread
   needs. As a watchdog against a schedule that breaks that rule, a wait
   during which the step has not moved for LIN_WAIT_LIMIT seconds gives up,
   with a "linsched:" line on stderr.

   In mode seed the points call sched_yield(), which under Valgrind hands
   the CPU to another thread (natively it lets the kernel run another
   one): different seeds give different interleavings, but a seed does
   not fix one, natively or under Valgrind, since the thread that runs
   after a yield is the scheduler's choice.

   The programs take their nodes from static pools and never free them, so
   no memory is reused and there is no ABA problem from reuse. */
#ifndef LINSCHED_H
#define LINSCHED_H

/* clock_gettime under -std=c11; include this header first. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIN_MAX_THREADS 4    /* workers, threads 2..LIN_MAX_THREADS+1 */
#define LIN_MAX_OPS 24       /* operations of one thread (main included) */
#define LIN_MAX_GATES 32     /* gates of a schedule */
#define LIN_MAX_POINTS 8     /* point ids 0..7 */
#define LIN_BEGIN 0          /* the point the harness passes before each operation */
#define LIN_WAIT_LIMIT 10    /* seconds a wait at a gate lasts without progress before it gives up */

#ifdef FAULTY
#define LIN_BUILD "faulty"
#else
#define LIN_BUILD "correct"
#endif

/* An operation function: a real call in the binary, with its own symbol
   and the signature the source gives it (no inlining, no cloning). */
#define LIN_OPFN __attribute__((noinline, noipa))

/* A schedule point; p is a small integer, 1..LIN_MAX_POINTS-1. */
#define LIN_POINT(p) lin_point(p)

/* A gate of a schedule: thread's nth arrival (1-based) at point. */
struct lin_gate {
    int thread, point, nth;
};

/* One operation: what to do and, after it, what it gave. */
struct lin_op {
    int kind;        /* the program's operation code */
    int arg[2];      /* inputs */
    int res[2];      /* outputs, as the program's run function fills them */
    int who;         /* the thread: 1 for main, 2... for the workers */
    int call, ret;   /* the clock before the call and after the return */
};

/* A worker's list of operations. */
struct lin_list {
    int nops;
    struct lin_op op[LIN_MAX_OPS];
};

/* The program's part: run one operation (call the data structure's
   function, store the results in op->res), and format it as
   "NAME [ARG...] -> RESULT". */
typedef void lin_run_fn(struct lin_op *op);
typedef void lin_format_fn(const struct lin_op *op, char *buf, size_t size);

enum { LIN_MODE_BAD = 1, LIN_MODE_SEED = 2, LIN_MODE_FREE = 3 };

static int lin_mode;
static unsigned lin_seed;
static const char *lin_prog;
static lin_run_fn *lin_run_op;

/* The schedule (mode bad) and its state, under lin_lock. */
static const struct lin_gate *lin_gates;
static int lin_ngates;
static pthread_mutex_t lin_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lin_moved = PTHREAD_COND_INITIALIZER; /* lin_step or lin_started changed */
static int lin_step;                 /* the gate that may be passed next */
static int lin_void[LIN_MAX_GATES];  /* 1: the gate will never be passed */
static int lin_started;              /* workers at the start line */
static atomic_int lin_clock;

/* The main thread's operations and the workers' lists. */
static struct lin_op lin_main_ops[LIN_MAX_OPS];
static int lin_nmain;
static struct lin_list *lin_lists;
static int lin_nthreads;

/* What a thread knows about itself. */
struct lin_self {
    int id;                      /* 1: main; 2...: the workers */
    int held;                    /* the gate this thread passed and still holds, or -1 */
    int passed[LIN_MAX_GATES];   /* 1: passed or voided by this thread */
    int count[LIN_MAX_POINTS];   /* arrivals at each point */
    unsigned rng;
};
static _Thread_local struct lin_self lin_me;

/* lin_skip moves the step over void gates and wakes the waiting threads.
   Called with lin_lock held, like the two functions after it. */
static void
lin_skip(void)
{
    while (lin_step < lin_ngates && lin_void[lin_step])
        lin_step++;
    pthread_cond_broadcast(&lin_moved);
}

/* lin_release gives up the gate this thread holds: the next gate may be
   passed. */
static void
lin_release(void)
{
    if (lin_me.held < 0)
        return;
    if (lin_step == lin_me.held)
        lin_step++;
    lin_me.held = -1;
    lin_skip();
}

/* lin_void_own makes this thread's gates before limit that it has not
   passed void. */
static void
lin_void_own(int limit)
{
    int j;

    for (j = 0; j < limit; j++) {
        if (lin_gates[j].thread == lin_me.id && !lin_me.passed[j]) {
            lin_me.passed[j] = 1;
            lin_void[j] = 1;
        }
    }
    lin_skip();
}

/* lin_wait blocks until the step reaches gate g, or until
   LIN_WAIT_LIMIT seconds have passed without the step moving (a schedule
   that cannot go on: then it says so on stderr and goes on). */
static void
lin_wait(int g, int p, int nth)
{
    struct timespec limit;
    int last = -1;

    while (lin_step < g) {
        if (lin_step != last) {
            last = lin_step;
            clock_gettime(CLOCK_REALTIME, &limit);
            limit.tv_sec += LIN_WAIT_LIMIT;
        }
        if (pthread_cond_timedwait(&lin_moved, &lin_lock, &limit) == ETIMEDOUT && lin_step == last) {
            fprintf(stderr, "linsched: %s: thread %d gave up waiting at gate %d (point %d, arrival %d); step %d\n",
                    lin_prog, lin_me.id, g, p, nth, lin_step);
            return;
        }
    }
}

/* lin_point is a schedule point: in mode bad, the thread waits here when
   this arrival is a gate that is not yet its turn; in mode seed it yields
   0 to 3 times. The main thread never waits. */
static __attribute__((noinline)) void
lin_point(int p)
{
    int nth, g;

    if (lin_me.id <= 1 || p < 0 || p >= LIN_MAX_POINTS || lin_mode == LIN_MODE_FREE)
        return;
    nth = ++lin_me.count[p];
    if (lin_mode == LIN_MODE_SEED) {
        int r;
        lin_me.rng = lin_me.rng * 1103515245u + 12345u;
        for (r = (lin_me.rng >> 16) & 3; r > 0; r--)
            sched_yield();
        return;
    }
    for (g = 0; g < lin_ngates; g++) {
        const struct lin_gate *gt = &lin_gates[g];
        if (gt->thread == lin_me.id && gt->point == p && gt->nth == nth && !lin_me.passed[g])
            break;
    }
    if (g == lin_ngates)
        return; /* not a gate: a thread holding a gate keeps it */
    pthread_mutex_lock(&lin_lock);
    lin_release();
    lin_void_own(g);
    lin_me.passed[g] = 1;
    lin_wait(g, p, nth);
    lin_me.held = g;
    pthread_mutex_unlock(&lin_lock);
}

/* lin_do runs one operation of the calling thread: point LIN_BEGIN, then
   the call, between two ticks of the clock. */
static void
lin_do(struct lin_op *op)
{
    lin_point(LIN_BEGIN);
    op->who = lin_me.id;
    op->call = atomic_fetch_add(&lin_clock, 1);
    lin_run_op(op);
    op->ret = atomic_fetch_add(&lin_clock, 1);
}

/* lin_main_op runs an operation in the main thread (before the workers
   start or after they are joined) and keeps it for lin_print. */
static struct lin_op *
lin_main_op(int kind, int a0, int a1)
{
    struct lin_op *op;

    if (lin_nmain == LIN_MAX_OPS) {
        fprintf(stderr, "%s: too many main-thread operations\n", lin_prog);
        exit(1);
    }
    op = &lin_main_ops[lin_nmain++];
    op->kind = kind;
    op->arg[0] = a0;
    op->arg[1] = a1;
    lin_do(op);
    return op;
}

/* lin_worker is a worker thread: it waits at the start line, runs its
   list of operations, and gives up its gates. */
static void *
lin_worker(void *arg)
{
    struct lin_list *list = arg;
    int i;

    lin_me.id = (int)(list - lin_lists) + 2;
    lin_me.held = -1;
    lin_me.rng = lin_seed * 2654435761u + (unsigned)lin_me.id * 40503u;
    /* The start line: no worker starts before all exist. */
    pthread_mutex_lock(&lin_lock);
    lin_started++;
    pthread_cond_broadcast(&lin_moved);
    while (lin_started < lin_nthreads)
        pthread_cond_wait(&lin_moved, &lin_lock);
    pthread_mutex_unlock(&lin_lock);
    for (i = 0; i < list->nops; i++)
        lin_do(&list->op[i]);
    if (lin_mode == LIN_MODE_BAD) {
        pthread_mutex_lock(&lin_lock);
        lin_release();
        lin_void_own(lin_ngates);
        pthread_mutex_unlock(&lin_lock);
    }
    return NULL;
}

/* lin_args reads the arguments ("bad", "seed N" or "free"), remembers the
   program's name and run function, and prints the first line. It returns
   LIN_MODE_BAD, LIN_MODE_SEED or LIN_MODE_FREE, or exits with status 2. */
static int
lin_args(int argc, char **argv, const char *prog, lin_run_fn *run)
{
    lin_prog = prog;
    lin_run_op = run;
    lin_me.id = 1;
    lin_me.held = -1;
    if (argc == 2 && strcmp(argv[1], "bad") == 0) {
        lin_mode = LIN_MODE_BAD;
        printf("%s %s bad\n", prog, LIN_BUILD);
    } else if (argc == 2 && strcmp(argv[1], "free") == 0) {
        lin_mode = LIN_MODE_FREE;
        printf("%s %s free\n", prog, LIN_BUILD);
    } else if (argc == 3 && strcmp(argv[1], "seed") == 0) {
        char *end;
        long n = strtol(argv[2], &end, 10);
        if (*argv[2] == '\0' || *end != '\0' || n < 1 || n > 1000000)
            goto usage;
        lin_mode = LIN_MODE_SEED;
        lin_seed = (unsigned)n;
        printf("%s %s seed %ld\n", prog, LIN_BUILD, n);
    } else {
        goto usage;
    }
    return lin_mode;
usage:
    fprintf(stderr, "usage: %s bad | %s seed N (1 <= N <= 1000000) | %s free\n", prog, prog, prog);
    exit(2);
}

/* lin_run starts one worker per list, runs them under the schedule gates
   (mode bad; ignored in mode seed) and joins them. */
static void
lin_run(struct lin_list *lists, int n, const struct lin_gate *gates, int ngates)
{
    pthread_t t[LIN_MAX_THREADS];
    int i, err;

    if (n < 1 || n > LIN_MAX_THREADS || ngates > LIN_MAX_GATES) {
        fprintf(stderr, "%s: bad plan: %d threads, %d gates\n", lin_prog, n, ngates);
        exit(1);
    }
    lin_lists = lists;
    lin_nthreads = n;
    if (lin_mode == LIN_MODE_BAD) {
        lin_gates = gates;
        lin_ngates = ngates;
    }
    for (i = 0; i < n; i++) {
        err = pthread_create(&t[i], NULL, lin_worker, &lists[i]);
        if (err != 0) {
            fprintf(stderr, "%s: pthread_create: error %d\n", lin_prog, err);
            exit(1);
        }
    }
    for (i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* lin_print prints every operation, the main thread's and the workers',
   in the order of their calls. */
static void
lin_print(lin_format_fn *format)
{
    const struct lin_op *all[LIN_MAX_OPS * (LIN_MAX_THREADS + 1)];
    int n = 0, i, j;
    char buf[128];

    for (i = 0; i < lin_nmain; i++)
        all[n++] = &lin_main_ops[i];
    for (i = 0; i < lin_nthreads; i++)
        for (j = 0; j < lin_lists[i].nops; j++)
            all[n++] = &lin_lists[i].op[j];
    /* Insertion sort by call: the clock values are distinct. */
    for (i = 1; i < n; i++) {
        const struct lin_op *o = all[i];
        for (j = i; j > 0 && all[j - 1]->call > o->call; j--)
            all[j] = all[j - 1];
        all[j] = o;
    }
    for (i = 0; i < n; i++) {
        format(all[i], buf, sizeof buf);
        printf("t%d %s @%d-%d\n", all[i]->who, buf, all[i]->call, all[i]->ret);
    }
}

#endif /* LINSCHED_H */
