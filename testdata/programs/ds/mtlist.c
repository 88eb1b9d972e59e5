/* mtlist.c: a sorted singly linked list shared by worker threads under
   one pthread mutex, with injectable faults: the multithreaded program of
   the data structure suite (not in the fault-location paper's Table 3).

   What it does: the main thread builds a list of BASE (100) random keys
   by sorted inserts, then starts NTHREADS (4) workers. Each worker runs
   OPS/NTHREADS (100) random operations: insert a random key (duplicates
   allowed; the new node goes before the first node whose key is not
   smaller) or delete the node at a random position. Every operation runs
   with the mutex held and takes the next number of the global operation
   counter (0 .. OPS-1) when it starts. Each worker draws from its own
   xorshift64 sequence, seeded from SEED and its index, so a worker's
   choices are the same in every run of a seed; which operation gets which
   number depends on how the threads interleave (natively, or under the
   recorder). Each node is one malloc'd struct mtnode (new_node, called
   from every thread); the head is a global. Keys are in [0, 10000).

   C-points: MGTRACE_CPOINT("mtnode") at the start and at the end of
   mt_insert and mt_delete, inside the lock (spec: mtlist.spec), in
   whichever thread runs the operation.

   Usage: mtlist [SEED [BASE [OPS]]]   (defaults 1 100 400: the seed, the
          inserts of the base, the operations of all workers together;
          BASE from 2 to 3000, OPS from 0 to 400; a bad argument exits
          with status 2)
   Build: gcc -g -O1 -fno-omit-frame-pointer -pthread -I include
          [-DFAULT=k] mtlist.c

   Output (stdout): one line
       mtlist seed S: count N walked N checksum XXXXXXXX
   (count is the program's node count, walked the nodes reached from the
   head, checksum a hash of the keys in list order). Exit status 0. With
   FAULT=k, stderr gets "FAULT k fired at op N in thread T", where T is
   the thread's number in a recorded trace: the main thread is 1, the
   workers 2 .. NTHREADS+1 in creation order. A walk longer than 1e6 steps
   in one operation (a cycle) stops the run: "giving up at op N", exit 3.

   Faults (-DFAULT=k; each fires once, in whichever thread first reaches
   its code path at or after the given value of the operation counter;
   the faulty store is the line marked with the comment FAULT k):
   1  mt_insert, line 203: the new node's next skips its successor
      (n->next = cur->next instead of cur), so cur->next has two
      predecessors (cur, now unreachable, and n): INDEGREE == 1 broken.
      From op 100.
   2  mt_delete, line 231: unlinking skips one node too many
      (prev->next = victim->next->next): the skipped node, now
      unreachable, and prev both point to the node after it (INDEGREE
      2). From op 200.
   3  mt_insert, line 205: the new node's next points back at its
      predecessor (n->next = prev): a cycle prev -> n -> prev, the order
      n -> prev broken, prev has two predecessors. From op 300; the next
      walk past it loops and the run gives up (exit 3). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 10000
#define NTHREADS 4
#define BASE 100
#define OPS 400
#define MAXBASE 3000
#define STEP_LIMIT 1000000L

struct mtnode {
    int key;
    struct mtnode *next;
};

static struct mtnode *head; /* the list (outside the heap) */
static int count;           /* nodes in the list */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int n_base = BASE; /* inserts of the main thread (argv[2]) */
static int n_ops = OPS;   /* operations of all workers (argv[3]) */
static int op_no = -1;    /* the running operation, -1 in the base */
static long steps;        /* loop steps in the running operation */

/* A worker: its trace thread number and its generator. */
struct worker {
    pthread_t th;
    int tid;  /* 1 the main thread, workers 2.. in creation order */
    int nops; /* operations it runs */
    unsigned long long rng;
};

static struct worker main_worker = {.tid = 1};

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

/* seed returns the start of the generator of worker i (0 the main). */
static unsigned long long
seed(unsigned long long s, int i)
{
    unsigned long long r =
        (s + (unsigned long long)i * 0x632be59bd9b4e019ULL) *
            0x9e3779b97f4a7c15ULL +
        0x2545f4914f6cdd1dULL;

    return r == 0 ? 1 : r;
}

/* rnd returns a pseudo-random number in [0, n) from w's sequence. */
static unsigned
rnd(struct worker *w, unsigned n)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return (unsigned)((w->rng >> 11) % n);
}

/* step counts one loop step; a corrupt list can make a walk endless. */
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
/* FAULTY(lvalue, value) is the injected wrong store, volatile so that it
   keeps its own source line (see README.md). */
#define FAULTY(lv, v) (*(__typeof__(lv) volatile *)&(lv) = (v))

static int fired_op = -1;

/* fault_fire says whether the injected fault fires now, in w: true once,
   the first time any thread asks at or after operation `at`. The caller
   holds the lock. */
static int
fault_fire(struct worker *w, int at)
{
    if (op_no < at || fired_op >= 0)
        return 0;
    fired_op = op_no;
    fprintf(stderr, "FAULT %d fired at op %d in thread %d\n", FAULT, op_no,
            w->tid);
    return 1;
}
#endif

#define CPOINT() MGTRACE_CPOINT("mtnode")

/* new_node allocates every node of the list, in any thread. */
static struct mtnode *
new_node(int key)
{
    struct mtnode *n = malloc(sizeof(struct mtnode));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->next = NULL;
    return n;
}

/* mt_insert links a new node with key before the first node whose key is
   not smaller. The caller holds the lock. */
__attribute__((noinline)) void
mt_insert(struct worker *w, int key)
{
    struct mtnode *n, *prev = NULL, *cur = head;

    CPOINT();
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
    if (cur != NULL && cur->next != NULL && fault_fire(w, 100)) FAULTY(n->next, cur->next); /* FAULT 1 */ else n->next = cur;
#elif FAULT == 3
    if (prev != NULL && fault_fire(w, 300)) FAULTY(n->next, prev); /* FAULT 3 */ else n->next = cur;
#else
    (void)w;
    n->next = cur;
#endif
    count++;
    CPOINT();
}

/* mt_delete unlinks and frees the node at position pos (0 is the head).
   The caller holds the lock. */
__attribute__((noinline)) void
mt_delete(struct worker *w, int pos)
{
    struct mtnode *prev = NULL, *victim = head;

    CPOINT();
    while (pos-- > 0 && victim->next != NULL) {
        step();
        prev = victim;
        victim = victim->next;
    }
    if (prev == NULL) {
        head = victim->next;
    } else {
#if FAULT == 2
        if (victim->next != NULL && victim->next->next != NULL && fault_fire(w, 200)) FAULTY(prev->next, victim->next->next); /* FAULT 2 */ else prev->next = victim->next;
#else
        (void)w;
        prev->next = victim->next;
#endif
    }
    free(victim);
    count--;
    CPOINT();
}

/* work is a worker thread: nops operations, each under the lock. */
static void *
work(void *arg)
{
    struct worker *w = arg;
    int i;

    for (i = 0; i < w->nops; i++) {
        int ins = rnd(w, 2) == 0;
        int key = (int)rnd(w, KEYS);
        unsigned pos = rnd(w, KEYS);

        pthread_mutex_lock(&lock);
        op_no++;
        steps = 0;
        if (count == 0 || ins)
            mt_insert(w, key);
        else
            mt_delete(w, (int)(pos % (unsigned)count));
        pthread_mutex_unlock(&lock);
        sched_yield(); /* let the others in: under the recorder, one
                          thread at a time runs, for long time slices */
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    static struct worker workers[NTHREADS];
    unsigned long long s = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    struct mtnode *n;
    unsigned long sum = 0;
    int i, err, walked = 0;

    if (argc > 4) {
        fprintf(stderr, "usage: %s [SEED [BASE [OPS]]]\n", argv[0]);
        exit(2);
    }
    if (argc > 2)
        n_base = count_arg(argv[2], "BASE", 2, MAXBASE);
    if (argc > 3)
        n_ops = count_arg(argv[3], "OPS", 0, OPS);
    main_worker.rng = seed(s, 0);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        mt_insert(&main_worker, (int)rnd(&main_worker, KEYS));
    }
    op_no = -1; /* the workers' first operation is op 0 */
    for (i = 0; i < NTHREADS; i++) {
        workers[i].tid = i + 2;
        workers[i].nops = n_ops / NTHREADS + (i < n_ops % NTHREADS);
        workers[i].rng = seed(s, i + 1);
        err = pthread_create(&workers[i].th, NULL, work, &workers[i]);
        if (err != 0) {
            fprintf(stderr, "pthread_create: %s\n", strerror(err));
            exit(1);
        }
    }
    for (i = 0; i < NTHREADS; i++)
        pthread_join(workers[i].th, NULL);
    steps = 0;
    for (n = head; n != NULL; n = n->next) {
        step();
        sum = sum * 31 + (unsigned long)n->key;
        walked++;
    }
    printf("mtlist seed %llu: count %d walked %d checksum %08lx\n", s, count,
           walked, sum & 0xffffffffUL);
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
