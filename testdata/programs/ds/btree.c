/* btree.c: a B-tree of order 3 (a 2-3 tree), the "B tree" of the fault-location paper's
   evaluation (Table 3) with its node (Example 4), with injectable faults.

   What it does: a node holds one or two keys (count) and, unless it is a
   leaf, count + 1 children; all leaves are at the same depth. Insert
   goes down to a leaf and splits full nodes on the way back up (a new
   root when the root splits). Delete removes the key from a leaf (a key
   of an internal node is first replaced by its predecessor) and fixes a
   node left without a key on the way back up: it borrows a key from a
   sibling with two, or merges with a sibling with one (the root goes
   when it has no key left). The program inserts BASE (1000) distinct
   random keys, then runs OPS (500) random operations: insert a new random
   key or delete a random present one. Each node is one malloc'd struct
   btree (new_node); the root is a global.

   C-points: MGTRACE_CPOINT("btree") at the start and at the end of
   bt_insert and bt_delete (spec: btree.spec, which declares none).

   Usage: btree [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] btree.c

   Output (stdout): one line
       btree seed S: keys N walked N nodes M checksum XXXXXXXX
   (keys: keys present; walked: keys met walking the tree from the root;
   nodes: nodes allocated; checksum: a hash of the keys in order). With
   FAULT=k, stderr gets "FAULT k fired at op N"; more than 1e6 steps in
   one operation, or a key not found where it must be, stop the run
   ("giving up at op N", exit 3). With -DSELFCHECK, stderr gets
   "SELFCHECK VIOLATION at op N (where): ..." for each constraint of
   btree.spec broken at a C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  ins, line 446: when an internal node splits, the new right node's
      first child is the node's second child instead of its third: that
      child has two parents (INDEGREE == 1 broken), the third is cut off.
      From op 100.
   2  ins, line 425: when an internal node gains a key from a child's
      split, its count goes up by two instead of one: three children for
      a count of 3 (OUTDEGREE == count + 1 broken). From op 200.
   3  fix, line 489: when an internal node borrows from its left
      sibling, it takes the sibling's second child instead of its third:
      that child has two parents, the third is cut off. From op 300. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS (1 << 17)

struct btree {
    int count;
    int key[2];
    struct btree *child[3];
};

static struct btree *root; /* the tree (outside the heap) */
static int nnodes;         /* nodes allocated */
static int nkeys;          /* keys present: keys[i] */
static int keys[4096];
static unsigned char present[KEYS / 8];

#include "suite.h" /* the suite's common part */

_Static_assert(sizeof keys / sizeof keys[0] >= MAXBASE + OPS, "keys must hold every key");

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    int i;

    for (i = 0; i < 3; i++)
        slots[i] = ((struct btree *)p)->child[i];
}

/* selfcheck evaluates btree.spec: INDEGREE <= 1, no cycle, an internal
   node has 2 or 3 children and count + 1 of them. */
static void
selfcheck(const char *where)
{
    int i;

    selfcheck_begin();
    graph_build(3, slots_of);
    for (i = 0; i < nlive; i++) {
        struct btree *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node [%d] has INDEGREE %d", x->key[0],
                      g_indeg[i]);
        if (g_outdeg[i] != 0 &&
            (g_outdeg[i] < 2 || g_outdeg[i] > 3 || g_outdeg[i] != x->count + 1))
            violation(where, "node [%d] has count %d and OUTDEGREE %d",
                      x->key[0], x->count, g_outdeg[i]);
    }
    if (!g_acyclic)
        violation(where, "the tree has a cycle");
}
#define CPOINT(where)                                                       \
    do {                                                                    \
        MGTRACE_CPOINT("btree");                                            \
        selfcheck(where);                                                   \
    } while (0)
#else
#define CPOINT(where) MGTRACE_CPOINT("btree")
#endif

static void
give_up(const char *why)
{
    fprintf(stderr, "giving up at op %d: %s\n", op_no, why);
    exit(3);
}

/* new_node allocates every node of the tree: one key, no children. */
static struct btree *
new_node(int key)
{
    struct btree *n = malloc(sizeof(struct btree));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->count = 1;
    n->key[0] = key;
    n->key[1] = 0;
    n->child[0] = NULL;
    n->child[1] = NULL;
    n->child[2] = NULL;
    nnodes++;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct btree *n)
{
    LIVE_DEL(n);
    nnodes--;
    free(n);
}

/* ins inserts key into the subtree n. When n splits, it returns 1 and
   sets *up to the key that moves up and *right to n's new right
   sibling. */
static int
ins(struct btree *n, int key, int *up, struct btree **right)
{
    struct btree *r = NULL, *nr, *cc[4];
    int i = 0, k = key, kk[3], j;

    step();
    while (i < n->count && n->key[i] < key)
        i++;
    if (n->child[0] != NULL && !ins(n->child[i], key, &k, &r))
        return 0;
    /* k (with r, its right child, unless n is a leaf) goes in at i */
    if (n->count == 1) {
        if (i == 0) {
            n->key[1] = n->key[0];
            n->child[2] = n->child[1];
            n->key[0] = k;
            n->child[1] = r;
        } else {
            n->key[1] = k;
            n->child[2] = r;
        }
#if FAULT == 2
        if (r != NULL && fault_fire(200)) FAULTY(n->count, n->count + 2); /* FAULT 2 */ else n->count++;
#else
        n->count++;
#endif
        return 0;
    }
    /* n is full: three keys, four children; n keeps the first key and
       the first two children, the second key goes up, a new node nr
       takes the third key and the last two children */
    for (j = 0; j < 3; j++)
        kk[j] = j < i ? n->key[j] : j == i ? k : n->key[j - 1];
    for (j = 0; j < 4; j++)
        cc[j] = j <= i ? n->child[j] : j == i + 1 ? r : n->child[j - 1];
    nr = new_node(kk[2]);
    n->count = 1;
    n->key[0] = kk[0];
    n->key[1] = 0;
    n->child[0] = cc[0];
    n->child[1] = cc[1];
    n->child[2] = NULL;
#if FAULT == 1
    if (cc[1] != NULL && fault_fire(100)) FAULTY(nr->child[0], cc[1]); /* FAULT 1 */ else nr->child[0] = cc[2];
#else
    nr->child[0] = cc[2];
#endif
    nr->child[1] = cc[3];
    *up = kk[1];
    *right = nr;
    return 1;
}

/* bt_insert adds key, which is not in the tree. */
__attribute__((noinline)) void
bt_insert(int key)
{
    struct btree *r, *nr;
    int k;

    CPOINT("insert begin");
    if (root == NULL) {
        root = new_node(key);
    } else if (ins(root, key, &k, &r)) {
        nr = new_node(k);
        nr->child[0] = root;
        nr->child[1] = r;
        root = nr;
    }
    CPOINT("insert end");
}

/* fix repairs n's child i, left without a key (and with one child unless
   it is a leaf). It returns 1 when n is left without a key in turn. */
static int
fix(struct btree *n, int i)
{
    struct btree *c = n->child[i], *s;
    int j;

    if (i > 0 && n->child[i - 1]->count == 2) {
        /* borrow from the left sibling */
        s = n->child[i - 1];
        c->key[0] = n->key[i - 1];
        c->child[1] = c->child[0];
#if FAULT == 3
        if (s->child[1] != NULL && fault_fire(300)) FAULTY(c->child[0], s->child[1]); /* FAULT 3 */ else c->child[0] = s->child[2];
#else
        c->child[0] = s->child[2];
#endif
        s->child[2] = NULL;
        n->key[i - 1] = s->key[1];
        s->count = 1;
        c->count = 1;
        return 0;
    }
    if (i < n->count && n->child[i + 1]->count == 2) {
        /* borrow from the right sibling */
        s = n->child[i + 1];
        c->key[0] = n->key[i];
        c->child[1] = s->child[0];
        n->key[i] = s->key[0];
        s->key[0] = s->key[1];
        s->child[0] = s->child[1];
        s->child[1] = s->child[2];
        s->child[2] = NULL;
        s->count = 1;
        c->count = 1;
        return 0;
    }
    if (i > 0) {
        /* merge c into its left sibling, which has one key */
        s = n->child[i - 1];
        s->key[1] = n->key[i - 1];
        s->child[2] = c->child[0];
        s->count = 2;
        for (j = i; j < n->count; j++) {
            n->key[j - 1] = n->key[j];
            n->child[j] = n->child[j + 1];
        }
        n->child[n->count] = NULL;
        n->count--;
        free_node(c);
    } else {
        /* merge the right sibling, which has one key, into c */
        s = n->child[1];
        c->key[0] = n->key[0];
        c->key[1] = s->key[0];
        c->child[1] = s->child[0];
        c->child[2] = s->child[1];
        c->count = 2;
        for (j = 1; j < n->count; j++) {
            n->key[j - 1] = n->key[j];
            n->child[j] = n->child[j + 1];
        }
        n->child[n->count] = NULL;
        n->count--;
        free_node(s);
    }
    return n->count == 0;
}

/* del removes key from the subtree n. It returns 1 when n is left
   without a key, for its parent to fix. */
static int
del(struct btree *n, int key)
{
    struct btree *p;
    int i = 0;

    step();
    while (i < n->count && n->key[i] < key)
        i++;
    if (n->child[0] == NULL) {
        if (i == n->count || n->key[i] != key)
            give_up("key not found");
        if (i == 0 && n->count == 2)
            n->key[0] = n->key[1];
        n->count--;
        return n->count == 0;
    }
    if (i < n->count && n->key[i] == key) {
        /* an internal key: replace it by its predecessor, the largest key
           of child i, and delete that one from child i */
        for (p = n->child[i]; p->child[0] != NULL; p = p->child[p->count])
            step();
        key = p->key[p->count - 1];
        n->key[i] = key;
    }
    return del(n->child[i], key) && fix(n, i);
}

/* bt_delete removes key, which is in the tree. */
__attribute__((noinline)) void
bt_delete(int key)
{
    struct btree *old;

    CPOINT("delete begin");
    if (del(root, key)) {
        old = root;
        root = root->child[0];
        free_node(old);
    }
    CPOINT("delete end");
}

static int
is_present(int k)
{
    return present[k / 8] >> (k % 8) & 1;
}

static void
add_key(void)
{
    int k;

    do
        k = (int)rnd(KEYS);
    while (is_present(k));
    present[k / 8] |= (unsigned char)(1u << (k % 8));
    keys[nkeys++] = k;
    bt_insert(k);
}

static void
remove_key(void)
{
    int i = (int)rnd((unsigned)nkeys), k = keys[i];

    present[k / 8] &= (unsigned char)~(1u << (k % 8));
    keys[i] = keys[--nkeys];
    bt_delete(k);
}

static void
walk(const struct btree *n, int *walked, unsigned long *sum)
{
    int i;

    if (n == NULL)
        return;
    step();
    for (i = 0; i < n->count && i < 2; i++) {
        walk(n->child[i], walked, sum);
        ++*walked;
        *sum = *sum * 31 + (unsigned long)n->key[i];
    }
    walk(n->child[i], walked, sum);
}

int
main(int argc, char **argv)
{
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        add_key();
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (nkeys == 0 || rnd(2) == 0)
            add_key();
        else
            remove_key();
    }
    steps = 0;
    walk(root, &walked, &sum);
    printf("btree seed %s: keys %d walked %d nodes %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, nnodes,
           sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
