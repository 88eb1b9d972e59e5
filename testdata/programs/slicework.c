/* slicework.c: the slicing benchmark's program (bench/slicebench): N
   operations on a chained hash table of malloc'd entries and an array of
   counters, then a fold of both into a checksum.

   Exercises: long runs with real data flow for backward slicing. Each
   operation draws a key from a fixed 64-bit linear congruential generator,
   walks the key's bucket chain (pointer loads, data-dependent branches),
   updates the entry it finds (a load-add-store of its count and sum) or
   links a new one at the head of the chain (malloc, pointer stores), and
   adds to a counter array indexed by the key; every 16th operation unlinks
   and frees the entry it reached, when it found one. At the end
   table_fold() walks every chain and sums the counter array, so the
   printed checksum depends on nearly every store the run made. The same
   arguments always do the same work.

   Usage: slicework [N]   N operations (default 1000, at most 100000000).
   Instruction instances under the recorder (libc's start-up and exit
   included; the first operations cost more, they fill the table): N =
   5200 about 1 M, N = 131000 about 10.2 M, N = 160000 about 12.3 M.

   Output (stdout):
       ops 1000 entries 903 removed 4 checksum add5a149023a1084
   ops: N; entries: entries left in the table; removed: entries freed;
   checksum: the fold (hex). Exit status 0.

   A test should assert that line for the default (above), and entries +
   removed equal to the number of distinct insertions. In a trace: one
   malloc of the bucket array, `entries + removed` mallocs of 32 bytes,
   `removed` frees before the fold. */
#include <stdio.h>
#include <stdlib.h>

#define BUCKETS 512   /* power of two */
#define KEYS    4096  /* keys are drawn from 0..KEYS-1 */
#define COUNTERS 256

struct entry {
    unsigned long key;
    unsigned long count;
    unsigned long sum;
    struct entry *next;
};

struct table {
    struct entry **bucket;
    unsigned long entries, removed;
    unsigned long counter[COUNTERS];
};

/* Knuth's MMIX LCG; keys use the high bits. */
static unsigned long lcg_state = 1;

static unsigned long lcg_next(void)
{
    lcg_state = lcg_state * 6364136223846793005UL + 1442695040888963407UL;
    return lcg_state >> 33;
}

static unsigned long hash(unsigned long key)
{
    key ^= key >> 7;
    key *= 0x9e3779b97f4a7c15UL;
    return (key >> 20) & (BUCKETS - 1);
}

/* table_op adds value under key; every 16th operation (drop) removes
   the entry instead when it is there. */
static void table_op(struct table *t, unsigned long key, unsigned long value, int drop)
{
    struct entry **link = &t->bucket[hash(key)];
    struct entry *e;
    for (e = *link; e != NULL; link = &e->next, e = e->next) {
        if (e->key == key)
            break;
    }
    if (e != NULL && drop) {
        *link = e->next;
        free(e);
        t->entries--;
        t->removed++;
    } else if (e != NULL) {
        e->count++;
        e->sum += value;
    } else {
        e = malloc(sizeof *e);
        if (e == NULL) {
            perror("malloc");
            exit(1);
        }
        e->key = key;
        e->count = 1;
        e->sum = value;
        e->next = t->bucket[hash(key)];
        t->bucket[hash(key)] = e;
        t->entries++;
    }
    t->counter[key % COUNTERS] += value & 0xff;
}

/* table_fold hashes every entry and counter into one word. */
static unsigned long table_fold(const struct table *t)
{
    unsigned long h = 14695981039346656037UL;
    for (int b = 0; b < BUCKETS; b++) {
        for (const struct entry *e = t->bucket[b]; e != NULL; e = e->next)
            h = (h ^ (e->key * 31 + e->count * 7 + e->sum)) * 1099511628211UL;
    }
    for (int c = 0; c < COUNTERS; c++)
        h = (h ^ t->counter[c]) * 1099511628211UL;
    return h;
}

int main(int argc, char **argv)
{
    long n = 1000;
    if (argc > 1) {
        char *end;
        n = strtol(argv[1], &end, 10);
        if (*end != '\0' || n < 0 || n > 100000000) {
            fprintf(stderr, "usage: slicework [N]   (0 <= N <= 100000000)\n");
            return 2;
        }
    }
    static struct table t;
    t.bucket = calloc(BUCKETS, sizeof *t.bucket);
    if (t.bucket == NULL) {
        perror("calloc");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        unsigned long r = lcg_next();
        table_op(&t, r % KEYS, r >> 12, i % 16 == 15);
    }
    printf("ops %ld entries %lu removed %lu checksum %lx\n", n, t.entries, t.removed, table_fold(&t));
    return 0;
}
