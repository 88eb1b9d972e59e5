/* prbtree.c: a red-black tree with parent links and a sentinel (the
   algorithms of Cormen, Leiserson, Rivest and Stein, "Introduction to
   Algorithms", chapter 13), with injectable faults. Not one of the
   fault-location paper's programs: its spec needs the constraint
   language's forms for real code (connections over chosen slots, count).

   What it does: builds a tree of BASE (1000) distinct random keys, then
   runs OPS (500) random operations: insert a random key that is not in
   the tree, or delete a random key of the tree. Each node is one
   malloc'd struct prbnode {color, key, left, right, parent} (new_node).
   The sentinel nil is one more malloc'd struct prbnode (new_sentinel),
   black, with NULL children: every leaf's left and right and the root's
   parent point to it, and the deletes store into its parent, as in the
   book. The root and the sentinel are reached through globals. The keys
   are also kept in a static array (outside the heap) to pick the ones to
   delete.

   C-points: MGTRACE_CPOINT("prbnode") at the start and at the end of
   rb_insert and rb_delete (spec: prbtree.spec, which declares none).

   Usage: prbtree [SEED [BASE [OPS]]]   (defaults 1 1000 500: the
          xorshift64 sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          prbtree.c
   There is no -DSELFCHECK version.

   Output (stdout): one line
       prbtree seed S: count N walked N checksum XXXXXXXX
   (walked: the nodes reached from the root, checksum a hash of their
   keys in order). With FAULT=k, stderr gets "FAULT k fired at op N".

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  rb_insert: the new node z, to hang below a black node y, gets the
      sentinel as its parent instead of y: y has z as a child, but z's
      parent is not y, and z is a second root (a node other than the
      sentinel whose parent is the sentinel: the count of roots is 2).
      From op 100.
   2  rb_insert: the new node is painted black instead of red (where its
      parent is black, so that no fixup runs): the black heights of its
      parent's subtrees differ. From op 200.
   3  rb_delete, a node z with two children whose successor y is red (no
      fixup): z's left child w, now y's, gets y's new parent (z's old
      parent) as its parent instead of y: y has w as a child, but w's
      parent is not y, and that parent has no child w (or, where z was
      the root, w is a second root). From op 300. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 100000
#define RED 0
#define BLACK 1

struct prbnode {
    int color;
    long key;
    struct prbnode *left;
    struct prbnode *right;
    struct prbnode *parent;
};

static struct prbnode *root; /* the tree (outside the heap) */
static struct prbnode *nil;  /* the sentinel */
static long keys[4096];      /* the keys in the tree, unordered */
static int nkeys;
static unsigned char present[KEYS / 8 + 1];

#include "suite.h" /* the suite's common part */

#define CPOINT(where) MGTRACE_CPOINT("prbnode")

static struct prbnode *
alloc_node(void)
{
    struct prbnode *n = malloc(sizeof(struct prbnode));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    return n;
}

/* new_sentinel allocates the sentinel. */
static struct prbnode *
new_sentinel(void)
{
    struct prbnode *n = alloc_node();

    n->color = BLACK;
    n->key = -1;
    n->left = n->right = NULL;
    n->parent = NULL;
    return n;
}

/* new_node allocates every node of the tree. */
static struct prbnode *
new_node(long key)
{
    struct prbnode *n = alloc_node();

    n->key = key;
    return n;
}

static void
left_rotate(struct prbnode *x)
{
    struct prbnode *y = x->right;

    x->right = y->left;
    if (y->left != nil)
        y->left->parent = x;
    y->parent = x->parent;
    if (x->parent == nil)
        root = y;
    else if (x == x->parent->left)
        x->parent->left = y;
    else
        x->parent->right = y;
    y->left = x;
    x->parent = y;
}

static void
right_rotate(struct prbnode *x)
{
    struct prbnode *y = x->left;

    x->left = y->right;
    if (y->right != nil)
        y->right->parent = x;
    y->parent = x->parent;
    if (x->parent == nil)
        root = y;
    else if (x == x->parent->right)
        x->parent->right = y;
    else
        x->parent->left = y;
    y->right = x;
    x->parent = y;
}

static void
insert_fixup(struct prbnode *z)
{
    struct prbnode *y;

    while (z->parent->color == RED) {
        step();
        if (z->parent == z->parent->parent->left) {
            y = z->parent->parent->right;
            if (y->color == RED) {
                z->parent->color = BLACK;
                y->color = BLACK;
                z->parent->parent->color = RED;
                z = z->parent->parent;
            } else {
                if (z == z->parent->right) {
                    z = z->parent;
                    left_rotate(z);
                }
                z->parent->color = BLACK;
                z->parent->parent->color = RED;
                right_rotate(z->parent->parent);
            }
        } else {
            y = z->parent->parent->left;
            if (y->color == RED) {
                z->parent->color = BLACK;
                y->color = BLACK;
                z->parent->parent->color = RED;
                z = z->parent->parent;
            } else {
                if (z == z->parent->left) {
                    z = z->parent;
                    right_rotate(z);
                }
                z->parent->color = BLACK;
                z->parent->parent->color = RED;
                left_rotate(z->parent->parent);
            }
        }
    }
    if (root->color != BLACK)
        root->color = BLACK;
}

/* rb_insert adds key, which is not in the tree. */
__attribute__((noinline)) void
rb_insert(long key)
{
    struct prbnode *z, *x = root, *y = nil;

    CPOINT("insert begin");
    z = new_node(key);
    while (x != nil) {
        step();
        y = x;
        x = key < x->key ? x->left : x->right;
    }
    z->left = nil;
    z->right = nil;
#if FAULT == 1
    if (y != nil && y->color == BLACK && fault_fire(100)) FAULTY(z->parent, nil); /* FAULT 1 */ else z->parent = y;
#else
    z->parent = y;
#endif
    if (y == nil)
        root = z;
    else if (key < y->key)
        y->left = z;
    else
        y->right = z;
#if FAULT == 2
    if (y != nil && y->color == BLACK && fault_fire(200)) FAULTY(z->color, BLACK); /* FAULT 2 */ else z->color = RED;
#else
    z->color = RED;
#endif
    insert_fixup(z);
    keys[nkeys++] = key;
    present[key / 8] |= (unsigned char)(1u << (key % 8));
    CPOINT("insert end");
}

static void
transplant(struct prbnode *u, struct prbnode *v)
{
    if (u->parent == nil)
        root = v;
    else if (u == u->parent->left)
        u->parent->left = v;
    else
        u->parent->right = v;
    v->parent = u->parent;
}

static void
delete_fixup(struct prbnode *x)
{
    struct prbnode *w;

    while (x != root && x->color == BLACK) {
        step();
        if (x == x->parent->left) {
            w = x->parent->right;
            if (w->color == RED) {
                w->color = BLACK;
                x->parent->color = RED;
                left_rotate(x->parent);
                w = x->parent->right;
            }
            if (w->left->color == BLACK && w->right->color == BLACK) {
                w->color = RED;
                x = x->parent;
            } else {
                if (w->right->color == BLACK) {
                    w->left->color = BLACK;
                    w->color = RED;
                    right_rotate(w);
                    w = x->parent->right;
                }
                w->color = x->parent->color;
                x->parent->color = BLACK;
                w->right->color = BLACK;
                left_rotate(x->parent);
                x = root;
            }
        } else {
            w = x->parent->left;
            if (w->color == RED) {
                w->color = BLACK;
                x->parent->color = RED;
                right_rotate(x->parent);
                w = x->parent->left;
            }
            if (w->right->color == BLACK && w->left->color == BLACK) {
                w->color = RED;
                x = x->parent;
            } else {
                if (w->left->color == BLACK) {
                    w->right->color = BLACK;
                    w->color = RED;
                    left_rotate(w);
                    w = x->parent->left;
                }
                w->color = x->parent->color;
                x->parent->color = BLACK;
                w->left->color = BLACK;
                right_rotate(x->parent);
                x = root;
            }
        }
    }
    if (x->color != BLACK)
        x->color = BLACK;
}

/* rb_delete removes the key keys[k] from the tree. */
__attribute__((noinline)) void
rb_delete(int k)
{
    long key = keys[k];
    struct prbnode *z = root, *x, *y;
    int y_color;

    CPOINT("delete begin");
    while (z != nil && z->key != key) {
        step();
        z = key < z->key ? z->left : z->right;
    }
    y = z;
    y_color = y->color;
    if (z->left == nil) {
        x = z->right;
        transplant(z, z->right);
    } else if (z->right == nil) {
        x = z->left;
        transplant(z, z->left);
    } else {
        for (y = z->right; y->left != nil; y = y->left)
            step();
        y_color = y->color;
        x = y->right;
        if (y->parent == z) {
            x->parent = y;
        } else {
            transplant(y, y->right);
            y->right = z->right;
            y->right->parent = y;
        }
        transplant(z, y);
        y->left = z->left;
#if FAULT == 3
        if (y_color == RED && fault_fire(300)) FAULTY(y->left->parent, y->parent); /* FAULT 3 */ else y->left->parent = y;
#else
        y->left->parent = y;
#endif
        y->color = z->color;
    }
    if (y_color == BLACK)
        delete_fixup(x);
    free(z);
    present[key / 8] &= (unsigned char)~(1u << (key % 8));
    keys[k] = keys[--nkeys];
    CPOINT("delete end");
}

static int
has(long key)
{
    return present[key / 8] >> (key % 8) & 1;
}

static unsigned long sum;
static int walked;

static void
walk(struct prbnode *n)
{
    if (n == nil)
        return;
    step();
    walk(n->left);
    sum = sum * 31 + (unsigned long)n->key;
    walked++;
    walk(n->right);
}

int
main(int argc, char **argv)
{
    long key;

    parse_args(argc, argv);
    nil = new_sentinel();
    root = nil;
    while (nkeys < n_base) {
        steps = 0;
        key = (long)rnd(KEYS);
        if (!has(key))
            rb_insert(key);
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (nkeys == 0 || rnd(2) == 0) {
            do
                key = (long)rnd(KEYS);
            while (has(key));
            rb_insert(key);
        } else {
            rb_delete((int)rnd((unsigned)nkeys));
        }
    }
    steps = 0;
    walk(root);
    printf("prbtree seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, sum & 0xffffffffUL);
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
