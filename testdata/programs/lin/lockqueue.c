/* lockqueue.c: a FIFO queue of ints, a linked list with a dummy head node,
   guarded by one pthread mutex.

   Exercises: a lock-based data structure whose FAULTY build looks at
   shared state outside its lock. The FAULTY lq_dequeue reads the head and
   its successor (and decides that the queue is not empty) before taking
   the lock, and then unlinks what it read without looking again: two
   dequeuers that read before either unlinks both return the same element.
   The correct build does all of it under the lock. Operations, as
   analyze lin sees them (lockqueue.lin):
       void lq_enqueue(struct queue *q, int v)      enqueue(v)
       int  lq_dequeue(struct queue *q, int *out)   dequeue() -> *out,
                                                    or nil when it returns 0
   The main thread enqueues 1 and 2 before the workers start, and dequeues
   until the queue is empty after joining them.

   Usage: lockqueue bad | lockqueue seed N   (see linsched.h)
   bad: t2 runs dequeue, enqueue 21; t3 dequeue, dequeue; t4 enqueue 41,
   dequeue. t2's and t3's first dequeues both read the head before either
   takes the lock; t2 unlinks first. The FAULTY build prints
       t2 dequeue -> 1 @4-6
       t3 dequeue -> 1 @5-9
   (1 dequeued twice; the correct build gives t3 the 2).
   seed N: t2 enqueue 21, dequeue, enqueue 22, dequeue; t3 dequeue,
   enqueue 31, dequeue, enqueue 32; t4 enqueue 41, enqueue 42, dequeue,
   dequeue.

   Output (stdout): "lockqueue BUILD MODE", then one line per operation in
   call order, "tN enqueue V -> ok @C-R" or "tN dequeue -> V|empty @C-R"
   (linsched.h). Exit status 0, the FAULTY build too: the wrong answer is
   for the linearizability checker to find. */
#include "linsched.h"

struct node {
    int val;
    struct node *next;
};

struct queue {
    pthread_mutex_t lock;
    struct node *head; /* a dummy: the first element is head->next */
    struct node *tail;
};

/* Schedule points. */
enum { P_DEQ = 1, P_ENQ };

/* Nodes come from a pool and are never freed (see linsched.h). */
static struct node pool[64];
static atomic_int pool_used;

static struct node *
new_node(int v)
{
    int i = atomic_fetch_add(&pool_used, 1);

    if (i >= (int)(sizeof pool / sizeof pool[0])) {
        fprintf(stderr, "lockqueue: node pool exhausted\n");
        exit(1);
    }
    pool[i].val = v;
    pool[i].next = NULL;
    return &pool[i];
}

LIN_OPFN void
lq_enqueue(struct queue *q, int v)
{
    struct node *n = new_node(v);

    LIN_POINT(P_ENQ);
    pthread_mutex_lock(&q->lock);
    q->tail->next = n;
    q->tail = n;
    pthread_mutex_unlock(&q->lock);
}

LIN_OPFN int
lq_dequeue(struct queue *q, int *out)
{
    struct node *first;

#ifdef FAULTY
    struct node *next;

    first = q->head; /* FAULT: the head and its successor read outside the lock */
    next = first->next;
    if (next == NULL)
        return 0;
    LIN_POINT(P_DEQ);
    pthread_mutex_lock(&q->lock);
    q->head = next; /* FAULT: unlinks what it read, without reading again */
    pthread_mutex_unlock(&q->lock);
    *out = next->val;
    return 1;
#else
    LIN_POINT(P_DEQ);
    pthread_mutex_lock(&q->lock);
    first = q->head;
    if (first->next == NULL) {
        pthread_mutex_unlock(&q->lock);
        return 0;
    }
    q->head = first->next;
    *out = q->head->val;
    pthread_mutex_unlock(&q->lock);
    return 1;
#endif
}

static struct node dummy;
static struct queue queue = { PTHREAD_MUTEX_INITIALIZER, &dummy, &dummy };

enum { ENQ, DEQ };

static void
run(struct lin_op *op)
{
    if (op->kind == ENQ)
        lq_enqueue(&queue, op->arg[0]);
    else
        op->res[0] = lq_dequeue(&queue, &op->res[1]);
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
    { 2, { D, E(21) } },
    { 2, { D, D } },
    { 2, { E(41), D } },
};

static const struct lin_gate bad_gates[] = {
    { 2, LIN_BEGIN, 1 }, /* t2's dequeue reads head and head->next (FAULTY) */
    { 3, LIN_BEGIN, 1 }, /* so does t3's: the same two nodes */
    { 2, P_DEQ, 1 },     /* t2 unlinks 1 and returns it; then enqueues 21 and exits */
    { 3, P_DEQ, 1 },     /* t3 unlinks the node it read: 1 again (FAULTY); then dequeues */
    { 4, LIN_BEGIN, 1 }, /* t4 enqueues 41 and dequeues */
};

static struct lin_list seed_lists[] = {
    { 4, { E(21), D, E(22), D } },
    { 4, { D, E(31), D, E(32) } },
    { 4, { E(41), E(42), D, D } },
};

int
main(int argc, char **argv)
{
    int mode = lin_args(argc, argv, "lockqueue", run);

    lin_main_op(ENQ, 1, 0);
    lin_main_op(ENQ, 2, 0);
    if (mode == LIN_MODE_BAD)
        lin_run(bad_lists, 3, bad_gates, sizeof bad_gates / sizeof bad_gates[0]);
    else
        lin_run(seed_lists, 3, NULL, 0);
    while (lin_main_op(DEQ, 0, 0)->res[0] != 0)
        continue;
    lin_print(format);
    return 0;
}
