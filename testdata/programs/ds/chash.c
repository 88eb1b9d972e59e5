/* chash.c: a chained hash table with incremental rehashing (the design
   of Redis' dict), with injectable faults. Not one of the fault-location
   paper's programs: it needs the constraint language's forms for real
   code (array slots as edges, count and sum, % and &).

   What it does: builds a table of BASE (1000) distinct random keys, then
   runs OPS (500) random operations: insert a random key (nothing happens
   when it is there already) or delete a random key of the table. The
   table is one malloc'd struct dict {size[2], mask[2], used[2],
   rehashidx, keysum, table[2]}: two bucket arrays (table[1] only while
   rehashing), each a calloc'd array of entry pointers (table_alloc);
   each entry is one malloc'd struct entry {key, next} (new_entry), at
   the head of the chain of bucket key & mask of its table. When an
   insert finds used[0] >= size[0], table[1] is made twice as large and
   rehashidx starts at 0; from then on every operation first moves the
   chain of bucket rehashidx of table[0] to table[1] (skipping at most 10
   empty buckets), new keys go to table[1], and when table[0] is empty it
   is freed and table[1] takes its place. keysum is the sum of the keys.
   The dict is reached through a global; the keys are also kept in a
   static array (outside the heap) to pick the ones to delete.

   C-points: MGTRACE_CPOINT("chash") (no type of the spec: all its
   constraints) at the start and at the end of ht_insert and ht_delete
   (spec: chash.spec, which declares none).

   Usage: chash [SEED [BASE [OPS]]]   (defaults 1 1000 500: the xorshift64
          sequence, the inserts of the base, the ops after it)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k]
          chash.c
   There is no -DSELFCHECK version.

   Output (stdout): one line
       chash seed S: count N walked N checksum XXXXXXXX
   (count: the keys in the table, walked: the entries reached from the
   buckets, checksum a hash of the keys bucket by bucket). With FAULT=k,
   stderr gets "FAULT k fired at op N".

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  ht_insert: used of the table the key goes to is increased by 2
      instead of 1 (before the entry is made): it no longer equals the
      entries reachable from the table (count), nor its share of all
      entries. From op 100.
   2  ht_delete: deleting the first entry of a chain that has a second
      one stores the third (e->next->next) into the bucket instead of
      the second: the second entry is lost, and the table's used is one
      more than the entries reachable from it. From op 200.
   3  ht_insert: a new entry for an empty bucket whose neighbour bucket
      (index + 1, & mask) is empty too is stored into the neighbour: its
      key & mask (or key % size) is not its bucket's index. From op
      300. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

#ifndef FAULT
#define FAULT 0
#endif

#define KEYS 100000
#define INITIAL 4     /* the first table's size */
#define EMPTY_VISITS 10

struct entry {
    long key;
    struct entry *next;
};

struct dict {
    long size[2];
    long mask[2];
    long used[2];
    long rehashidx; /* -1 when not rehashing */
    long keysum;
    struct entry **table[2];
};

static struct dict *d;             /* the table (outside the heap) */
static long keys[KEYS];            /* the keys in the table, unordered */
static int nkeys;

#include "suite.h" /* the suite's common part */

#define CPOINT(where) MGTRACE_CPOINT("chash")

/* table_alloc allocates every bucket array (not inlined: the spec binds
   the blocks it allocates). */
__attribute__((noinline)) static struct entry **
table_alloc(long size)
{
    struct entry **t = calloc((size_t)size, sizeof *t);

    if (t == NULL) {
        perror("calloc");
        exit(1);
    }
    return t;
}

/* new_entry allocates every entry. */
static struct entry *
new_entry(long key)
{
    struct entry *e = malloc(sizeof(struct entry));

    if (e == NULL) {
        perror("malloc");
        exit(1);
    }
    e->key = key;
    e->next = NULL;
    return e;
}

/* rehash_step moves one chain of table[0] to table[1], and ends the
   rehash when table[0] is empty. */
static void
rehash_step(void)
{
    int visits = EMPTY_VISITS;
    struct entry *e, *next;
    long h;

    if (d->rehashidx < 0)
        return;
    while (d->rehashidx < d->size[0] && d->table[0][d->rehashidx] == NULL) {
        step();
        d->rehashidx++;
        if (--visits == 0)
            return;
    }
    if (d->rehashidx < d->size[0]) {
        for (e = d->table[0][d->rehashidx]; e != NULL; e = next) {
            step();
            next = e->next;
            h = e->key & d->mask[1];
            e->next = d->table[1][h];
            d->table[1][h] = e;
            d->used[0]--;
            d->used[1]++;
        }
        d->table[0][d->rehashidx] = NULL;
        d->rehashidx++;
    }
    if (d->rehashidx == d->size[0]) {
        free(d->table[0]);
        d->table[0] = d->table[1];
        d->size[0] = d->size[1];
        d->mask[0] = d->mask[1];
        d->used[0] = d->used[1];
        d->table[1] = NULL;
        d->size[1] = 0;
        d->mask[1] = 0;
        d->used[1] = 0;
        d->rehashidx = -1;
    }
}

/* find returns the entry with key, or NULL. */
static struct entry *
find(long key)
{
    struct entry *e;
    int t;

    for (t = 0; t < 2; t++) {
        if (d->table[t] == NULL)
            continue;
        for (e = d->table[t][key & d->mask[t]]; e != NULL; e = e->next) {
            step();
            if (e->key == key)
                return e;
        }
    }
    return NULL;
}

/* ht_insert adds key to the table unless it is there. */
__attribute__((noinline)) void
ht_insert(long key)
{
    struct entry *e, **b;
    long idx;
    int t;

    CPOINT("insert begin");
    rehash_step();
    if (find(key) == NULL) {
        if (d->rehashidx < 0 && d->used[0] >= d->size[0]) {
            d->size[1] = 2 * d->size[0];
            d->mask[1] = d->size[1] - 1;
            d->table[1] = table_alloc(d->size[1]);
            d->rehashidx = 0;
        }
        t = d->rehashidx >= 0;
#if FAULT == 1
        if (fault_fire(100)) FAULTY(d->used[t], d->used[t] + 2); /* FAULT 1 */ else d->used[t]++;
#else
        d->used[t]++;
#endif
        e = new_entry(key);
        d->keysum += key;
        b = d->table[t];
        idx = key & d->mask[t];
        e->next = b[idx];
#if FAULT == 3
        if (b[idx] == NULL && b[(idx + 1) & d->mask[t]] == NULL && fault_fire(300)) FAULTY(b[(idx + 1) & d->mask[t]], e); /* FAULT 3 */ else b[idx] = e;
#else
        b[idx] = e;
#endif
        keys[nkeys++] = key;
    }
    CPOINT("insert end");
}

/* ht_delete removes the key keys[k] from the table. */
__attribute__((noinline)) void
ht_delete(int k)
{
    long key = keys[k], idx;
    struct entry *e, *prev = NULL, **b = NULL;
    int t;

    CPOINT("delete begin");
    rehash_step();
    for (t = 0; t < 2; t++) {
        if (d->table[t] == NULL)
            continue;
        b = d->table[t];
        idx = key & d->mask[t];
        prev = NULL;
        for (e = b[idx]; e != NULL && e->key != key; e = e->next) {
            step();
            prev = e;
        }
        if (e == NULL)
            continue;
        if (prev != NULL)
            prev->next = e->next;
        else
#if FAULT == 2
            if (e->next != NULL && fault_fire(200)) FAULTY(b[idx], e->next->next); /* FAULT 2 */ else b[idx] = e->next;
#else
            b[idx] = e->next;
#endif
        d->used[t]--;
        d->keysum -= key;
        free(e);
        keys[k] = keys[--nkeys];
        break;
    }
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct entry *e;
    unsigned long sum = 0;
    long i;
    int t, walked = 0;

    parse_args(argc, argv);
    d = malloc(sizeof(struct dict));
    if (d == NULL) {
        perror("malloc");
        return 1;
    }
    d->size[0] = INITIAL;
    d->mask[0] = INITIAL - 1;
    d->size[1] = d->mask[1] = 0;
    d->used[0] = d->used[1] = 0;
    d->rehashidx = -1;
    d->keysum = 0;
    d->table[0] = table_alloc(INITIAL);
    d->table[1] = NULL;
    while (nkeys < n_base) {
        steps = 0;
        ht_insert((long)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (nkeys == 0 || rnd(2) == 0)
            ht_insert((long)rnd(KEYS));
        else
            ht_delete((int)rnd((unsigned)nkeys));
    }
    steps = 0;
    for (t = 0; t < 2; t++)
        for (i = 0; d->table[t] != NULL && i < d->size[t]; i++)
            for (e = d->table[t][i]; e != NULL; e = e->next) {
                step();
                sum = sum * 31 + (unsigned long)e->key;
                walked++;
            }
    printf("chash seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", nkeys, walked, sum & 0xffffffffUL);
    return 0; /* the table stays allocated: the end of the run is a C-point */
}
