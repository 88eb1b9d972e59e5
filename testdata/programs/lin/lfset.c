/* lfset.c: a lock-free set of ints, the sorted linked list of Harris ("A
   Pragmatic Implementation of Non-Blocking Linked-Lists") as Michael
   ("High Performance Dynamic Lock-Free Hash Tables and List-Based Sets")
   gives it: a node is removed by first marking its next pointer (the low
   bit), which stops any compare-and-swap on that pointer, and then
   unlinking it; traversals unlink the marked nodes they meet.

   Exercises: a lock-free data structure whose FAULTY build skips the
   mark, the bug of the list called LockFreeList in Chen, Zhang, Wu and
   Zhang, "Automatic Localization of Linearizability Faults". The FAULTY
   set_remove unlinks its node with one compare-and-swap on the
   predecessor's next pointer, without marking the node first: an add that
   meanwhile linked a new node after the one being removed succeeds, and
   its node goes out of the list with the removed one. Operations, as
   analyze lin sees them (lfset.lin):
       int set_add(struct set *s, int key)        add(key) -> true if it returns 1
       int set_remove(struct set *s, int key)     remove(key) -> true if it returns 1
       int set_contains(struct set *s, int key)   contains(key) -> true if it returns 1
   Keys lie strictly between INT_MIN and INT_MAX (the sentinels). The main
   thread adds 10 and 30 before the workers start, and asks contains of 10,
   20, 30 and 40 after joining them.

   Usage: lfset bad | lfset seed N   (see linsched.h)
   bad: t2 runs remove 10, add 10; t3 add 20, remove 30; t4 contains 20,
   remove 20. t2's remove finds 10 and reads its successor (30); t3 adds
   20 between 10 and 30; then t2 unlinks 10 (FAULTY: with 20). The FAULTY
   build prints
       t3 add 20 -> true @5-6
       t4 contains 20 -> false @10-11
       t4 remove 20 -> false @12-13
   (20 added and never removed, yet absent; the correct build answers
   true and true).
   seed N: t2 add 20, remove 10, contains 30, add 10; t3 add 30, add 20,
   remove 20, contains 10; t4 remove 30, contains 20, add 40, remove 40.

   Output (stdout): "lfset BUILD MODE", then one line per operation in
   call order, "tN add|remove|contains K -> true|false @C-R"
   (linsched.h). Exit status 0, the FAULTY build too: the wrong answer is
   for the linearizability checker to find. */
#include "linsched.h"

#include <limits.h>
#include <stdint.h>

struct node {
    int key;
    _Atomic(uintptr_t) next; /* the successor's address | 1 when this node is removed */
};

struct set {
    struct node *head; /* sentinel INT_MIN; the list ends with a sentinel INT_MAX */
};

#define PTR(w) ((struct node *)((w) & ~(uintptr_t)1))
#define MARKED(w) ((w) & 1)

/* Schedule points. */
enum { P_FIND = 1, P_ADD, P_REM, P_CONTAINS };

/* Nodes come from a pool and are never freed (see linsched.h). */
static struct node pool[64];
static atomic_int pool_used;

static struct node *
new_node(int key)
{
    int i = atomic_fetch_add(&pool_used, 1);

    if (i >= (int)(sizeof pool / sizeof pool[0])) {
        fprintf(stderr, "lfset: node pool exhausted\n");
        exit(1);
    }
    pool[i].key = key;
    atomic_init(&pool[i].next, 0);
    return &pool[i];
}

/* find returns the first unmarked node whose key is at least key in *cur,
   and its predecessor in *prev, unlinking the marked nodes on its way;
   it returns whether *cur holds key. */
static int
find(struct set *s, int key, struct node **prev, struct node **cur)
{
    struct node *p, *c;
    uintptr_t w, expect;

retry:
    p = s->head;
    c = PTR(atomic_load(&p->next));
    for (;;) {
        LIN_POINT(P_FIND);
        w = atomic_load(&c->next);
        if (MARKED(w)) {
            /* c is removed: unlink it, unless p changed meanwhile. */
            expect = (uintptr_t)c;
            if (!atomic_compare_exchange_strong(&p->next, &expect, (uintptr_t)PTR(w)))
                goto retry;
            c = PTR(w);
            continue;
        }
        if (c->key >= key) {
            *prev = p;
            *cur = c;
            return c->key == key;
        }
        p = c;
        c = PTR(w);
    }
}

LIN_OPFN int
set_add(struct set *s, int key)
{
    struct node *prev, *cur, *n = NULL;
    uintptr_t expect;

    for (;;) {
        if (find(s, key, &prev, &cur))
            return 0;
        if (n == NULL)
            n = new_node(key);
        atomic_store(&n->next, (uintptr_t)cur);
        LIN_POINT(P_ADD);
        expect = (uintptr_t)cur;
        if (atomic_compare_exchange_strong(&prev->next, &expect, (uintptr_t)n))
            return 1;
    }
}

LIN_OPFN int
set_remove(struct set *s, int key)
{
    struct node *prev, *cur;
    uintptr_t w, expect;

    for (;;) {
        if (!find(s, key, &prev, &cur))
            return 0;
        w = atomic_load(&cur->next);
        if (MARKED(w))
            continue; /* removed meanwhile: find again */
        LIN_POINT(P_REM);
        expect = (uintptr_t)cur;
#ifdef FAULTY
        if (atomic_compare_exchange_strong(&prev->next, &expect, w)) /* FAULT: unlinks cur without marking it */
            return 1;
#else
        /* Mark cur: from here on it is not in the set, and nothing can
           link a node after it. */
        if (!atomic_compare_exchange_strong(&cur->next, &w, w | 1))
            continue;
        if (!atomic_compare_exchange_strong(&prev->next, &expect, w))
            find(s, key, &prev, &cur); /* let find unlink it */
        return 1;
#endif
    }
}

LIN_OPFN int
set_contains(struct set *s, int key)
{
    struct node *c = PTR(atomic_load(&s->head->next));

    while (c->key < key) {
        LIN_POINT(P_CONTAINS);
        c = PTR(atomic_load(&c->next));
    }
    return c->key == key && !MARKED(atomic_load(&c->next));
}

static struct node tail = { INT_MAX, 0 };
static struct node head = { INT_MIN, 0 }; /* next: &tail, set in main */
static struct set set = { &head };

enum { ADD, REMOVE, CONTAINS };

static void
run(struct lin_op *op)
{
    switch (op->kind) {
    case ADD:
        op->res[0] = set_add(&set, op->arg[0]);
        break;
    case REMOVE:
        op->res[0] = set_remove(&set, op->arg[0]);
        break;
    default:
        op->res[0] = set_contains(&set, op->arg[0]);
        break;
    }
}

static void
format(const struct lin_op *op, char *buf, size_t size)
{
    static const char *const names[] = { "add", "remove", "contains" };

    snprintf(buf, size, "%s %d -> %s", names[op->kind], op->arg[0], op->res[0] ? "true" : "false");
}

#define A(k) { ADD, { k, 0 }, { 0, 0 }, 0, 0, 0 }
#define R(k) { REMOVE, { k, 0 }, { 0, 0 }, 0, 0, 0 }
#define C(k) { CONTAINS, { k, 0 }, { 0, 0 }, 0, 0, 0 }

static struct lin_list bad_lists[] = {
    { 2, { R(10), A(10) } },
    { 2, { A(20), R(30) } },
    { 2, { C(20), R(20) } },
};

static const struct lin_gate bad_gates[] = {
    { 2, LIN_BEGIN, 1 }, /* t2's remove 10 finds 10, reads its next (30) */
    { 3, LIN_BEGIN, 1 }, /* t3 adds 20 between 10 and 30 */
    { 2, P_REM, 1 },     /* t2 unlinks 10 (FAULTY: and 20 with it); adds 10 */
    { 4, LIN_BEGIN, 1 }, /* t4: contains 20, remove 20 */
    { 3, LIN_BEGIN, 2 }, /* t3 removes 30 */
};

static struct lin_list seed_lists[] = {
    { 4, { A(20), R(10), C(30), A(10) } },
    { 4, { A(30), A(20), R(20), C(10) } },
    { 4, { R(30), C(20), A(40), R(40) } },
};

int
main(int argc, char **argv)
{
    int mode = lin_args(argc, argv, "lfset", run);

    atomic_init(&head.next, (uintptr_t)&tail);
    lin_main_op(ADD, 10, 0);
    lin_main_op(ADD, 30, 0);
    if (mode == LIN_MODE_BAD)
        lin_run(bad_lists, 3, bad_gates, sizeof bad_gates / sizeof bad_gates[0]);
    else
        lin_run(seed_lists, 3, NULL, 0);
    lin_main_op(CONTAINS, 10, 0);
    lin_main_op(CONTAINS, 20, 0);
    lin_main_op(CONTAINS, 30, 0);
    lin_main_op(CONTAINS, 40, 0);
    lin_print(format);
    return 0;
}
