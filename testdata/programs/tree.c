/* tree.c: a binary search tree: insert N pseudo-random keys, look them up,
   fold the tree into a checksum, free it.

   Exercises: a branching heap structure (two pointer fields per node),
   pointer-to-pointer stores (tree_insert links through a `struct tnode **`),
   recursion (tree_height, tree_checksum, tree_free), data-dependent
   branches. The keys come from a fixed 64-bit linear congruential generator,
   so every run with the same arguments does exactly the same work.

   Usage: tree [N [SEED]]   N keys (default 100, at most 1000000), SEED the
   generator's seed (default 1).

   Output (stdout):
       inserted 100 duplicates 0
       found 100 missing 100
       height 13
       checksum 80f66f66b524a07b
   inserted: distinct keys in the tree; duplicates: keys drawn twice (not
   inserted again); found: lookups of the N drawn keys that succeeded (all
   of them); missing: lookups of N keys known to be absent (odd keys: every
   inserted key is even) that failed (all of them); height: nodes on the
   longest root-to-leaf path; checksum: a hash of the keys in order (hex).
   Exit status 0.

   A test should assert the exact lines for the defaults (above, also in
   README.md), found == N and missing == N for any N. In a trace:
   `inserted` mallocs of 24 bytes, every node reachable from the root in
   the memory graph before tree_free, and as many frees. */
#include <stdio.h>
#include <stdlib.h>

struct tnode {
    long key;
    struct tnode *left, *right;
};

/* The generator: Knuth's MMIX LCG. Its low bits are weak, so keys use
   the high ones. */
static unsigned long lcg_state;

static unsigned long
lcg_next(void)
{
    lcg_state = lcg_state * 6364136223846793005UL + 1442695040888963407UL;
    return lcg_state >> 33;
}

/* tree_insert adds key unless it is there already; returns 1 when it
   added a node, 0 for a duplicate. */
__attribute__((noinline)) static int
tree_insert(struct tnode **root, long key)
{
    struct tnode **link = root, *n;

    while (*link != NULL) {
        if (key == (*link)->key)
            return 0;
        link = key < (*link)->key ? &(*link)->left : &(*link)->right;
    }
    n = malloc(sizeof *n);
    if (n == NULL) {
        perror("malloc");
        exit(1);
    }
    n->key = key;
    n->left = n->right = NULL;
    *link = n;
    return 1;
}

/* tree_lookup returns 1 when key is in the tree. */
__attribute__((noinline)) static int
tree_lookup(const struct tnode *n, long key)
{
    while (n != NULL) {
        if (key == n->key)
            return 1;
        n = key < n->key ? n->left : n->right;
    }
    return 0;
}

static int
tree_height(const struct tnode *n)
{
    int l, r;

    if (n == NULL)
        return 0;
    l = tree_height(n->left);
    r = tree_height(n->right);
    return 1 + (l > r ? l : r);
}

/* tree_checksum folds the keys, in order, into h (FNV-style). */
static unsigned long
tree_checksum(const struct tnode *n, unsigned long h)
{
    if (n == NULL)
        return h;
    h = tree_checksum(n->left, h);
    h = (h ^ (unsigned long)n->key) * 1099511628211UL;
    return tree_checksum(n->right, h);
}

static void
tree_free(struct tnode *n)
{
    if (n == NULL)
        return;
    tree_free(n->left);
    tree_free(n->right);
    free(n);
}

int
main(int argc, char **argv)
{
    long n = 100, i;
    unsigned long seed = 1;
    long *keys;
    long inserted = 0, duplicates = 0, found = 0, missing = 0;
    struct tnode *root = NULL;

    if (argc > 1)
        n = strtol(argv[1], NULL, 10);
    if (argc > 2)
        seed = strtoul(argv[2], NULL, 10);
    if (n < 0 || n > 1000000) {
        fprintf(stderr, "usage: tree [N [SEED]], 0 <= N <= 1000000\n");
        return 2;
    }

    /* Draw the keys first and keep them, to look them up afterwards.
       Keys are even; key + 1 is then certainly absent. */
    keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    if (keys == NULL) {
        perror("malloc");
        return 1;
    }
    lcg_state = seed;
    for (i = 0; i < n; i++)
        keys[i] = (long)(lcg_next() % 1000000) * 2;

    for (i = 0; i < n; i++) {
        if (tree_insert(&root, keys[i]))
            inserted++;
        else
            duplicates++;
    }
    for (i = 0; i < n; i++) {
        found += tree_lookup(root, keys[i]);
        missing += !tree_lookup(root, keys[i] + 1);
    }

    printf("inserted %ld duplicates %ld\n", inserted, duplicates);
    printf("found %ld missing %ld\n", found, missing);
    printf("height %d\n", tree_height(root));
    printf("checksum %016lx\n", tree_checksum(root, 14695981039346656037UL));

    tree_free(root);
    free(keys);
    return 0;
}
