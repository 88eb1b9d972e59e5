/* rbtree.c: a red-black tree, the "Red-Black tree" of the fault-location paper's
   evaluation (Table 3), with injectable faults.

   What it does: a left-leaning red-black tree (Sedgewick's LLRB: the
   recursive insert and delete, rotations and color flips, no parent
   pointers), whose node is the fault-location paper's struct rbtree (color, right, left)
   with a key after them. At every C-point the root is black, a red node
   has black children, and every path from a node down to a NULL child
   meets the same number of black nodes. The program inserts BASE (1000)
   distinct random keys, then runs OPS (500) random operations: insert a
   new random key or delete a random present one. Each node is one
   malloc'd struct rbtree (new_node); the root is a global.

   C-points: declared in rbtree.spec (CPOINT rb_insert ENTRY/EXIT, CPOINT
   rb_delete ENTRY/EXIT); the program has no MGTRACE_CPOINT.

   Usage: rbtree [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          [-DSELFCHECK] rbtree.c

   Output (stdout): one line
       rbtree seed S: keys N walked N black-height B checksum XXXXXXXX
   (keys: keys present; walked: nodes met walking the tree from the root;
   black-height: black nodes on the leftmost path; checksum: a hash of
   the keys in order). With FAULT=k, stderr gets "FAULT k fired at op
   N"; more than 1e6 steps in one operation stop the run ("giving up at
   op N", exit 3). With -DSELFCHECK, stderr gets "SELFCHECK VIOLATION at
   op N (where): ..." for each constraint of rbtree.spec broken at a
   C-point (first 20) and a summary line.

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  rotate_left, line 405: the rotated node h takes x->right instead of
      x->left as its right child: that subtree has two parents (INDEGREE
      == 1 broken), x's left subtree is cut off. From op 100.
   2  rotate_right, line 421: the mirror image: h takes x->left instead
      of x->right as its left child. From op 200.
   3  rb_insert, line 472: the last store of the insert paints the root
      RED instead of BLACK (the root must be black). From op 300.
   4  ins, line 223: the key is stored into the left child instead of the
      subtree ins returned (an integer in a pointer field): h->left holds
      a small non-heap address, so the left subtree is cut off and the
      black balance of h is broken (h has a right child). The same insert
      then follows the link (balance reads h->left's color) and dies of
      SIGSEGV before rb_insert EXIT: the crash is the first C-point after
      the store. From op 400. */
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
#define RED 0
#define BLACK 1

struct rbtree {
    int color;
    struct rbtree *right, *left;
    int key;
};

static struct rbtree *root; /* the tree (outside the heap) */
static int nkeys;           /* keys present: keys[i] */
static int keys[4096];
static unsigned char present[KEYS / 8];

#include "suite.h" /* the suite's common part */

_Static_assert(sizeof keys / sizeof keys[0] >= MAXBASE + OPS, "keys must hold every key");

#ifdef SELFCHECK
static void
slots_of(void *p, void **slots)
{
    slots[0] = ((struct rbtree *)p)->right;
    slots[1] = ((struct rbtree *)p)->left;
}

/* selfcheck evaluates rbtree.spec: INDEGREE <= 1, no cycle, a black
   root, black children of red nodes, equal black heights (BHEIGHT: -1
   for NULL, one more than the right child's for a black node, the same
   for a red one) of the two children. */
static void
selfcheck(const char *where)
{
    static int bh[MAXLIVE];
    int i, k, s, br, bl;

    selfcheck_begin();
    graph_build(2, slots_of);
    for (i = 0; i < nlive; i++) {
        struct rbtree *x = live[i];

        if (g_indeg[i] > 1)
            violation(where, "node %d has INDEGREE %d", x->key, g_indeg[i]);
        if (g_indeg[i] == 0 && x->color != BLACK)
            violation(where, "root %d is not black", x->key);
        for (s = 0; s < 2; s++)
            if (x->color == RED && g_out[i][s] >= 0 &&
                ((struct rbtree *)live[g_out[i][s]])->color != BLACK)
                violation(where, "red node %d has a red child", x->key);
    }
    if (!g_acyclic) {
        violation(where, "the tree has a cycle");
        return;
    }
    for (k = nlive - 1; k >= 0; k--) { /* children before parents */
        i = g_order[k];
        br = g_out[i][0] >= 0 ? bh[g_out[i][0]] : -1;
        bl = g_out[i][1] >= 0 ? bh[g_out[i][1]] : -1;
        bh[i] = br + (((struct rbtree *)live[i])->color == BLACK);
        if (br != bl)
            violation(where, "node %d: right BHEIGHT %d, left BHEIGHT %d",
                      ((struct rbtree *)live[i])->key, br, bl);
    }
}
#define SC(where) selfcheck(where)
#else
#define SC(where) ((void)0)
#endif

/* new_node allocates every node of the tree, red. */
static struct rbtree *
new_node(int key)
{
    struct rbtree *n = malloc(sizeof(struct rbtree));

    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->color = RED;
    n->right = NULL;
    n->left = NULL;
    n->key = key;
    LIVE_ADD(n);
    return n;
}

static void
free_node(struct rbtree *n)
{
    LIVE_DEL(n);
    free(n);
}

static int
is_red(const struct rbtree *h)
{
    return h != NULL && h->color == RED;
}

static struct rbtree *
rotate_left(struct rbtree *h)
{
    struct rbtree *x = h->right;

#if FAULT == 1
    if (x->right != NULL && fault_fire(100)) FAULTY(h->right, x->right); /* FAULT 1 */ else h->right = x->left;
#else
    h->right = x->left;
#endif
    x->left = h;
    x->color = h->color;
    h->color = RED;
    return x;
}

static struct rbtree *
rotate_right(struct rbtree *h)
{
    struct rbtree *x = h->left;

#if FAULT == 2
    if (x->left != NULL && fault_fire(200)) FAULTY(h->left, x->left); /* FAULT 2 */ else h->left = x->right;
#else
    h->left = x->right;
#endif
    x->right = h;
    x->color = h->color;
    h->color = RED;
    return x;
}

static void
flip_colors(struct rbtree *h)
{
    h->color = !h->color;
    h->left->color = !h->left->color;
    h->right->color = !h->right->color;
}

/* balance restores the left-leaning invariants at h on the way up. */
static struct rbtree *
balance(struct rbtree *h)
{
    if (is_red(h->right) && !is_red(h->left))
        h = rotate_left(h);
    if (is_red(h->left) && is_red(h->left->left))
        h = rotate_right(h);
    if (is_red(h->left) && is_red(h->right))
        flip_colors(h);
    return h;
}

static struct rbtree *
ins(struct rbtree *h, int key)
{
    step();
    if (h == NULL)
        return new_node(key);
    if (key < h->key)
#if FAULT == 4
        if (h->right != NULL && fault_fire(400)) { ins(h->left, key); FAULTY(h->left, (struct rbtree *)(uintptr_t)key); /* FAULT 4 */ } else h->left = ins(h->left, key);
#else
        h->left = ins(h->left, key);
#endif
    else if (key > h->key)
        h->right = ins(h->right, key);
    return balance(h);
}

/* rb_insert adds key, which is not in the tree. */
__attribute__((noinline)) void
rb_insert(int key)
{
    SC("insert entry");
    root = ins(root, key);
#if FAULT == 3
    if (root->color == BLACK && fault_fire(300)) FAULTY(root->color, RED); /* FAULT 3 */ else root->color = BLACK;
#else
    root->color = BLACK;
#endif
    SC("insert exit");
}

static struct rbtree *
move_red_left(struct rbtree *h)
{
    flip_colors(h);
    if (is_red(h->right->left)) {
        h->right = rotate_right(h->right);
        h = rotate_left(h);
        flip_colors(h);
    }
    return h;
}

static struct rbtree *
move_red_right(struct rbtree *h)
{
    flip_colors(h);
    if (is_red(h->left->left)) {
        h = rotate_right(h);
        flip_colors(h);
    }
    return h;
}

static struct rbtree *
delete_min(struct rbtree *h)
{
    step();
    if (h->left == NULL) {
        free_node(h);
        return NULL;
    }
    if (!is_red(h->left) && !is_red(h->left->left))
        h = move_red_left(h);
    h->left = delete_min(h->left);
    return balance(h);
}

static struct rbtree *
del(struct rbtree *h, int key)
{
    struct rbtree *m;

    step();
    if (key < h->key) {
        if (!is_red(h->left) && !is_red(h->left->left))
            h = move_red_left(h);
        h->left = del(h->left, key);
    } else {
        if (is_red(h->left))
            h = rotate_right(h);
        if (key == h->key && h->right == NULL) {
            free_node(h);
            return NULL;
        }
        if (!is_red(h->right) && !is_red(h->right->left))
            h = move_red_right(h);
        if (key == h->key) {
            for (m = h->right; m->left != NULL; m = m->left)
                step();
            h->key = m->key;
            h->right = delete_min(h->right);
        } else {
            h->right = del(h->right, key);
        }
    }
    return balance(h);
}

/* rb_delete removes key, which is in the tree. */
__attribute__((noinline)) void
rb_delete(int key)
{
    SC("delete entry");
    if (!is_red(root->left) && !is_red(root->right))
        root->color = RED;
    root = del(root, key);
    if (root != NULL)
        root->color = BLACK;
    SC("delete exit");
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
    rb_insert(k);
}

static void
remove_key(void)
{
    int i = (int)rnd((unsigned)nkeys), k = keys[i];

    present[k / 8] &= (unsigned char)~(1u << (k % 8));
    keys[i] = keys[--nkeys];
    rb_delete(k);
}

static void
walk(const struct rbtree *n, int *walked, unsigned long *sum)
{
    if (n == NULL)
        return;
    step();
    walk(n->left, walked, sum);
    ++*walked;
    *sum = *sum * 31 + (unsigned long)n->key;
    walk(n->right, walked, sum);
}

int
main(int argc, char **argv)
{
    const struct rbtree *n;
    unsigned long sum = 0;
    int i, walked = 0, bh = 0;

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
    for (n = root; n != NULL; n = n->left) {
        step();
        bh += n->color == BLACK;
    }
    printf("rbtree seed %s: keys %d walked %d black-height %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, bh, sum & 0xffffffffUL);
#ifdef SELFCHECK
    selfcheck("exit");
    selfcheck_summary();
#endif
    return 0; /* the tree stays allocated: the end of the run is a C-point */
}
