/* treiber.c: the lock-free stack of Treiber ("Systems Programming: Coping
   with Parallelism"), a linked list whose top pointer changes only by
   compare-and-swap, with C11 atomics.

   Exercises: a lock-free data structure whose FAULTY build keeps a value
   across a retry. The FAULTY stk_pop reads the value of the top node once,
   before its compare-and-swap loop; when the compare-and-swap fails
   (another thread pushed or popped meanwhile) it retries with the new top
   and unlinks that node, but returns the value it read first: the value
   of a node another thread already popped. The correct build reads the
   value of the node it is about to unlink, on every try. Operations, as
   analyze lin sees them (treiber.lin):
       void stk_push(struct stack *s, int v)      push(v)
       int  stk_pop(struct stack *s, int *out)    pop() -> *out,
                                                  or nil when it returns 0
   The main thread pushes 1 and 2 before the workers start, and pops until
   the stack is empty after joining them.

   Usage: treiber bad | treiber seed N   (see linsched.h)
   bad: t2 runs pop, pop; t3 pop, push 32; t4 push 41, pop. t2's first
   pop reads the top (2) and its value; t3 pops 2; t4 pushes 41; t2's
   compare-and-swap fails, it retries and unlinks 41. The FAULTY build
   prints
       t2 pop -> 2 @4-9
       t3 pop -> 2 @5-6
   (2 popped twice, 41 never popped; the correct t2 pop returns 41).
   seed N: t2 push 21, pop, push 22, pop; t3 pop, push 31, pop, push 32;
   t4 push 41, push 42, pop, pop.

   Output (stdout): "treiber BUILD MODE", then one line per operation in
   call order, "tN push V -> ok @C-R" or "tN pop -> V|empty @C-R"
   (linsched.h). Exit status 0, the FAULTY build too: the wrong answer is
   for the linearizability checker to find. */
#include "linsched.h"

struct node {
    int val;
    struct node *next; /* written before the node is pushed, then never */
};

struct stack {
    _Atomic(struct node *) top;
};

/* Schedule points: just before each compare-and-swap of top. */
enum { P_PUSH = 1, P_POP };

/* Nodes come from a pool and are never freed (see linsched.h), so a node
   popped and a node pushed never share an address (no ABA). */
static struct node pool[64];
static atomic_int pool_used;

static struct node *
new_node(int v)
{
    int i = atomic_fetch_add(&pool_used, 1);

    if (i >= (int)(sizeof pool / sizeof pool[0])) {
        fprintf(stderr, "treiber: node pool exhausted\n");
        exit(1);
    }
    pool[i].val = v;
    pool[i].next = NULL;
    return &pool[i];
}

LIN_OPFN void
stk_push(struct stack *s, int v)
{
    struct node *n = new_node(v);
    struct node *old = atomic_load(&s->top);

    do {
        n->next = old;
        LIN_POINT(P_PUSH);
    } while (!atomic_compare_exchange_strong(&s->top, &old, n));
}

LIN_OPFN int
stk_pop(struct stack *s, int *out)
{
    struct node *old = atomic_load(&s->top), *next;
    int v = 0;

#ifdef FAULTY
    if (old != NULL)
        v = old->val; /* FAULT: read once, kept when the compare-and-swap fails */
#endif
    for (;;) {
        if (old == NULL)
            return 0;
        next = old->next;
#ifndef FAULTY
        v = old->val;
#endif
        LIN_POINT(P_POP);
        /* On failure, old becomes the current top. */
        if (atomic_compare_exchange_strong(&s->top, &old, next))
            break;
    }
    *out = v;
    return 1;
}

static struct stack stack;

enum { PUSH, POP };

static void
run(struct lin_op *op)
{
    if (op->kind == PUSH)
        stk_push(&stack, op->arg[0]);
    else
        op->res[0] = stk_pop(&stack, &op->res[1]);
}

static void
format(const struct lin_op *op, char *buf, size_t size)
{
    if (op->kind == PUSH)
        snprintf(buf, size, "push %d -> ok", op->arg[0]);
    else if (op->res[0] == 0)
        snprintf(buf, size, "pop -> empty");
    else
        snprintf(buf, size, "pop -> %d", op->res[1]);
}

#define PU(v) { PUSH, { v, 0 }, { 0, 0 }, 0, 0, 0 }
#define PO { POP, { 0, 0 }, { 0, 0 }, 0, 0, 0 }

static struct lin_list bad_lists[] = {
    { 2, { PO, PO } },
    { 2, { PO, PU(32) } },
    { 2, { PU(41), PO } },
};

static const struct lin_gate bad_gates[] = {
    { 2, LIN_BEGIN, 1 }, /* t2's pop reads top (2), its next (1) (FAULTY: and its value) */
    { 3, LIN_BEGIN, 1 }, /* t3 pops 2 */
    { 4, LIN_BEGIN, 1 }, /* t4 pushes 41 onto 1 */
    { 2, P_POP, 1 },     /* t2's compare-and-swap fails; it retries, unlinks 41 (FAULTY: returns 2); pops 1 */
    { 4, LIN_BEGIN, 2 }, /* t4 pops: empty */
    { 3, LIN_BEGIN, 2 }, /* t3 pushes 32 */
};

static struct lin_list seed_lists[] = {
    { 4, { PU(21), PO, PU(22), PO } },
    { 4, { PO, PU(31), PO, PU(32) } },
    { 4, { PU(41), PU(42), PO, PO } },
};

int
main(int argc, char **argv)
{
    int mode = lin_args(argc, argv, "treiber", run);

    lin_main_op(PUSH, 1, 0);
    lin_main_op(PUSH, 2, 0);
    if (mode == LIN_MODE_BAD)
        lin_run(bad_lists, 3, bad_gates, sizeof bad_gates / sizeof bad_gates[0]);
    else
        lin_run(seed_lists, 3, NULL, 0);
    while (lin_main_op(POP, 0, 0)->res[0] != 0)
        continue;
    lin_print(format);
    return 0;
}
