/* msqueue.c: the non-blocking FIFO queue of Michael and Scott, "Simple,
   Fast, and Practical Non-Blocking and Blocking Concurrent Queue
   Algorithms", with C11 atomics: a linked list with a dummy head node,
   compare-and-swap on head, tail and the last node's next pointer.

   Exercises: a lock-free data structure whose FAULTY build replaces one
   compare-and-swap by a plain store. The FAULTY msq_enqueue links its
   node with a store into tail->next after seeing it NULL, instead of a
   compare-and-swap from NULL: two enqueuers that both saw the same NULL
   both store, the second overwrites the first's link, and the first's
   node (and the tail, which it moved onto that node) fall off the list.
   Operations, as analyze lin sees them (msqueue.lin):
       void msq_enqueue(struct queue *q, int v)      enqueue(v)
       int  msq_dequeue(struct queue *q, int *out)   dequeue() -> *out,
                                                     or nil when it returns 0
   The queue starts empty; the main thread dequeues until the queue is
   empty after joining the workers.

   Usage: msqueue bad | msqueue seed N   (see linsched.h)
   bad: t2 runs enqueue 21, dequeue; t3 enqueue 31, dequeue; t4 enqueue
   41, dequeue. t2 and t3 both read the tail (the dummy) and its NULL next
   before either links; t2 links 21 and moves the tail onto it, then t3
   links 31 over it; t4 then links 41 after 21, off the list. The FAULTY
   build prints
       t2 dequeue -> 31 @6-7
       t3 dequeue -> empty @8-9
       t4 dequeue -> empty @10-11
       t1 dequeue -> empty @12-13
   after all three enqueues returned (@0-2, @1-3, @4-5): 21 and 41 are
   lost (the correct build dequeues 21, 31, 41).
   seed N: t2 enqueue 21, enqueue 22, dequeue, dequeue; t3 enqueue 31,
   dequeue, enqueue 32, dequeue; t4 dequeue, enqueue 41, dequeue, enqueue
   42.

   Output (stdout): "msqueue BUILD MODE", then one line per operation in
   call order, "tN enqueue V -> ok @C-R" or "tN dequeue -> V|empty @C-R"
   (linsched.h). Exit status 0, the FAULTY build too: the wrong answer is
   for the linearizability checker to find. */
#include "linsched.h"

struct node {
    int val;
    _Atomic(struct node *) next;
};

struct queue {
    _Atomic(struct node *) head; /* a dummy: the first element is head->next */
    _Atomic(struct node *) tail; /* the last node, or one before it */
};

/* Schedule points. */
enum { P_ENQ_LINK = 1, P_DEQ };

/* Nodes come from a pool and are never freed (see linsched.h). */
static struct node pool[64];
static atomic_int pool_used;

static struct node *
new_node(int v)
{
    int i = atomic_fetch_add(&pool_used, 1);

    if (i >= (int)(sizeof pool / sizeof pool[0])) {
        fprintf(stderr, "msqueue: node pool exhausted\n");
        exit(1);
    }
    pool[i].val = v;
    atomic_init(&pool[i].next, NULL);
    return &pool[i];
}

LIN_OPFN void
msq_enqueue(struct queue *q, int v)
{
    struct node *n = new_node(v), *tail, *next;

    for (;;) {
        tail = atomic_load(&q->tail);
        next = atomic_load(&tail->next);
        if (tail != atomic_load(&q->tail))
            continue;
        if (next != NULL) {
            /* The tail lags behind: help move it. */
            atomic_compare_exchange_strong(&q->tail, &tail, next);
            continue;
        }
        LIN_POINT(P_ENQ_LINK); /* tail->next was NULL */
#ifdef FAULTY
        atomic_store(&tail->next, n); /* FAULT: a store, not a compare-and-swap from NULL */
        break;
#else
        if (atomic_compare_exchange_strong(&tail->next, &next, n))
            break;
#endif
    }
    atomic_compare_exchange_strong(&q->tail, &tail, n);
}

LIN_OPFN int
msq_dequeue(struct queue *q, int *out)
{
    struct node *head, *tail, *next;
    int v;

    for (;;) {
        head = atomic_load(&q->head);
        tail = atomic_load(&q->tail);
        next = atomic_load(&head->next);
        LIN_POINT(P_DEQ);
        if (head != atomic_load(&q->head))
            continue;
        if (next == NULL)
            return 0;
        if (head == tail) {
            /* The tail lags behind: help move it. */
            atomic_compare_exchange_strong(&q->tail, &tail, next);
            continue;
        }
        v = next->val;
        if (atomic_compare_exchange_strong(&q->head, &head, next))
            break;
    }
    *out = v;
    return 1;
}

static struct node dummy;
static struct queue queue = { &dummy, &dummy };

enum { ENQ, DEQ };

static void
run(struct lin_op *op)
{
    if (op->kind == ENQ)
        msq_enqueue(&queue, op->arg[0]);
    else
        op->res[0] = msq_dequeue(&queue, &op->res[1]);
}

static void
format(const struct lin_op *op, char *buf, size_t size)
{
    if (op->kind == ENQ)
        snprintf(buf, size, "enqueue %d -> ok", op->arg[0]);
    else if (op->res[0] == 0)
        snprintf(buf, size, "dequeue -> empty");
    else
        snprintf(buf, size, "dequeue -> %d", op->res[1]);
}

#define E(v) { ENQ, { v, 0 }, { 0, 0 }, 0, 0, 0 }
#define D { DEQ, { 0, 0 }, { 0, 0 }, 0, 0, 0 }

static struct lin_list bad_lists[] = {
    { 2, { E(21), D } },
    { 2, { E(31), D } },
    { 2, { E(41), D } },
};

static const struct lin_gate bad_gates[] = {
    { 2, LIN_BEGIN, 1 },  /* t2's enqueue 21 reads the tail (dummy) and its NULL next */
    { 3, LIN_BEGIN, 1 },  /* so does t3's enqueue 31 */
    { 2, P_ENQ_LINK, 1 }, /* t2 links 21 after the dummy, moves the tail onto 21 */
    { 3, P_ENQ_LINK, 1 }, /* t3 links 31 after the dummy (FAULTY: over 21) */
    { 4, LIN_BEGIN, 1 },  /* t4 enqueues 41 after the tail (FAULTY: 21, off the list) */
    { 2, LIN_BEGIN, 2 },  /* t2 dequeues */
    { 3, LIN_BEGIN, 2 },  /* t3 dequeues */
    { 4, LIN_BEGIN, 2 },  /* t4 dequeues */
};

static struct lin_list seed_lists[] = {
    { 4, { E(21), E(22), D, D } },
    { 4, { E(31), D, E(32), D } },
    { 4, { D, E(41), D, E(42) } },
};

int
main(int argc, char **argv)
{
    int mode = lin_args(argc, argv, "msqueue", run);

    if (mode == LIN_MODE_BAD)
        lin_run(bad_lists, 3, bad_gates, sizeof bad_gates / sizeof bad_gates[0]);
    else
        lin_run(seed_lists, 3, NULL, 0);
    while (lin_main_op(DEQ, 0, 0)->res[0] != 0)
        continue;
    lin_print(format);
    return 0;
}
