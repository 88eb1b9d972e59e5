/* itree.c: an intrusive binary search tree, its nodes linked through an
   embedded struct as the kernel's rb_node or BSD's RB_ENTRY link theirs,
   with injectable faults (ours: the fault-location paper has no intrusive
   structure; issue 14 item 1).

   What it does: builds a tree by BASE (1000) inserts of random keys
   (distinct: a key already there is not inserted again), then runs OPS
   (500) random operations: insert a random key, or delete the key of a
   random node (found by a random walk from the root). Each node is one
   malloc'd struct inode (new_node) that embeds its links (struct tlink
   tl) after its key, so child links point 8 bytes into the children: a
   node is got back from its link with container_of. The root link is a
   global. Every insert returns the new key's depth, found by a search
   from the root after linking (the checksum adds them up).

   C-points: MGTRACE_CPOINT("inode") at the start and at the end of
   it_insert and it_delete (spec: itree.spec, which declares `inode LINK
   2;`: a pointer to slot 2, the embedded link, is an edge to the node).

   Usage: itree [SEED [BASE [OPS]]]   (defaults 1 1000 500)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k] itree.c

   Output (stdout): one line
       itree seed S: count N walked N checksum XXXXXXXX
   With FAULT=k, stderr gets "FAULT k fired at op N". There is no
   -DSELFCHECK (the suite's self-check knows nodes by their heads only).

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  it_insert: a new key smaller than its parent's is linked as the
      parent's right child: the order is broken. From op 100.
   2  it_delete: a node d with two children is replaced by its in-order
      successor s, deeper than its right child, and s's parent takes s's
      right subtree as its left child: the fault gives it d's left subtree
      instead, which s takes too (INDEGREE 2). From op 200.
   3  it_delete: a node d whose only child is its right one is unlinked
      with *slot = d->left (NULL) instead of d->right: the right subtree
      is left hanging from the unlinked d, a second root; the poisoning of
      d's links and the free of d (correct) then cut it off on its own.
      From op 300.
   4  it_insert (a crash fault): the new key, an integer, is stored into
      the parent's child link instead of the new node's link; the depth
      search that follows in the same operation reads through it and
      dies of SIGSEGV before the operation's end C-point. From op 400. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 100000

/* struct tlink is the embedded link. */
struct tlink {
    struct tlink *left;
    struct tlink *right;
};

/* struct inode is a tree node: slots key, tl.left, tl.right. */
struct inode {
    long key;
    struct tlink tl;
};

#define node_of(l) ((struct inode *)((char *)(l) - offsetof(struct inode, tl)))

static struct tlink *root; /* the tree (outside the heap) */
static int count;          /* nodes in the tree */

#include "suite.h" /* the suite's common part */

#define CPOINT(where) MGTRACE_CPOINT("inode")

/* new_node allocates every node of the tree. */
static struct inode *
new_node(long key)
{
    struct inode *n = malloc(sizeof(struct inode));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->tl.left = NULL;
    n->tl.right = NULL;
    return n;
}

/* depth returns the depth of key in the tree (0 at the root), or -1. */
static int
depth(long key)
{
    struct tlink *l = root;
    int d = 0;

    while (l != NULL) {
        step();
        if (key == node_of(l)->key)
            return d;
        l = key < node_of(l)->key ? l->left : l->right;
        d++;
    }
    return -1;
}

/* it_insert adds key (when not there yet) and returns its depth. */
__attribute__((noinline)) int
it_insert(long key)
{
    struct tlink **slot = &root, *parent = NULL;
    struct inode *n;
    int d;

    CPOINT("insert begin");
    while (*slot != NULL) {
        step();
        parent = *slot;
        if (key == node_of(parent)->key) {
            CPOINT("insert end");
            return depth(key);
        }
        slot = key < node_of(parent)->key ? &parent->left : &parent->right;
    }
    n = new_node(key);
#if FAULT == 1
    if (parent != NULL && slot == &parent->left && fault_fire(100)) FAULTY(parent->right, &n->tl); /* FAULT 1 */ else *slot = &n->tl;
#elif FAULT == 4
    if (parent != NULL && fault_fire(400)) FAULTY(*slot, (struct tlink *)key); /* FAULT 4 */ else *slot = &n->tl;
#else
    *slot = &n->tl;
#endif
    count++;
    d = depth(key);
    CPOINT("insert end");
    return d;
}

/* it_delete removes the node holding key, if any. */
__attribute__((noinline)) void
it_delete(long key)
{
    struct tlink **slot = &root, *d, *s, *sp;

    CPOINT("delete begin");
    while (*slot != NULL && node_of(*slot)->key != key) {
        step();
        slot = key < node_of(*slot)->key ? &(*slot)->left : &(*slot)->right;
    }
    d = *slot;
    if (d == NULL) {
        CPOINT("delete end");
        return;
    }
    if (d->left == NULL) {
#if FAULT == 3
        if (d->right != NULL && fault_fire(300)) FAULTY(*slot, d->left); /* FAULT 3 */ else *slot = d->right;
#else
        *slot = d->right;
#endif
    } else if (d->right == NULL) {
        *slot = d->left;
    } else if (d->right->left == NULL) {
        s = d->right;
        s->left = d->left;
        *slot = s;
    } else {
        sp = d->right;
        s = sp->left;
        while (s->left != NULL) {
            step();
            sp = s;
            s = s->left;
        }
#if FAULT == 2
        if (fault_fire(200)) FAULTY(sp->left, d->left); /* FAULT 2 */ else sp->left = s->right;
#else
        sp->left = s->right;
#endif
        s->left = d->left;
        s->right = d->right;
        *slot = s;
    }
    /* Poison the links of the unlinked node before its free, as the
       kernel's list_del does: a stale pointer to it then fails fast. */
    d->left = NULL;
    d->right = NULL;
    free(node_of(d));
    count--;
    CPOINT("delete end");
}

/* random_key returns the key of a node reached by a random walk. */
static long
random_key(void)
{
    struct tlink *l = root;

    for (;;) {
        step();
        if (rnd(4) == 0 || (l->left == NULL && l->right == NULL))
            return node_of(l)->key;
        if (l->left != NULL && (l->right == NULL || rnd(2) == 0))
            l = l->left;
        else
            l = l->right;
    }
}

/* walk counts the nodes of a subtree and hashes their keys in order. */
static int
walk(struct tlink *l, unsigned long *sum)
{
    int k;

    if (l == NULL)
        return 0;
    step();
    k = walk(l->left, sum);
    *sum = *sum * 31 + (unsigned long)node_of(l)->key;
    return k + 1 + walk(l->right, sum);
}

int
main(int argc, char **argv)
{
    unsigned long sum = 0, depths = 0;
    int i, walked;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        depths += (unsigned long)it_insert((long)rnd(KEYS) + 1);
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            depths += (unsigned long)it_insert((long)rnd(KEYS) + 1);
        else
            it_delete(random_key());
    }
    steps = 0;
    walked = walk(root, &sum);
    printf("itree seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked,
           (sum + depths) & 0xffffffffUL);
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
