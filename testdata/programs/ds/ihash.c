/* ihash.c: an intrusive chained hash table in the style of the Linux
   kernel's hlist (a next link and a pprev link that points at whatever
   points at the entry: the previous entry's next link or the bucket's
   head), with injectable faults (ours: the fault-location paper has no
   intrusive structure; issue 14 item 1).

   What it does: builds a table of 128 buckets by BASE (1000) inserts of
   random keys, then runs OPS (500) random operations: insert a random key,
   or delete an entry at a random position of a random non-empty bucket.
   Every chain is kept sorted by key. Each entry is one malloc'd struct
   hentry (new_entry) that embeds its links (struct hnode hn) after two
   ints, so the next links point 8 bytes into the entries, and so do the
   pprev links that point at a previous entry's next link (the first link
   of its struct hnode). The buckets' heads are a global array.

   C-points: MGTRACE_CPOINT("hentry") at the start and at the end of
   ih_insert and ih_delete (spec: ihash.spec, which declares `hentry LINK
   3;`: a pointer to slot 3, the embedded link, is an edge to the entry).

   Usage: ihash [SEED [BASE [OPS]]]   (defaults 1 1000 500)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k] ihash.c

   Output (stdout): one line
       ihash seed S: count N walked N checksum XXXXXXXX
   With FAULT=k, stderr gets "FAULT k fired at op N". There is no
   -DSELFCHECK (the suite's self-check knows nodes by their heads only).

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  ih_insert: a new entry linked after entry p gets pprev = p's own
      pprev instead of the address of p's next link: p points at the new
      entry, which points back past p. From op 100.
   2  ih_delete: unlinking entry d leaves its successor's pprev pointing
      at d's next link instead of d's predecessor's: the predecessor
      points at the successor, which points back at d. From op 200.
   3  ih_insert: a new entry linked after entry p gets next = p instead
      of p's successor: the new entry and p point at each other by next
      (the order is broken), and p's old successor points back at the new
      entry, which does not point at it. From op 300. */
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
#define NBUCKETS 128

/* struct hnode is the embedded link, as the kernel's struct hlist_node. */
struct hnode {
    struct hnode *next;
    struct hnode **pprev;
};

/* struct hentry is a table entry: slots key, val, hn.next, hn.pprev. */
struct hentry {
    int key;
    int val;
    struct hnode hn;
};

/* struct hhead is a bucket's head, as the kernel's struct hlist_head. */
struct hhead {
    struct hnode *first;
};

#define entry_of(l) ((struct hentry *)((char *)(l) - offsetof(struct hentry, hn)))

static struct hhead table[NBUCKETS]; /* the buckets (outside the heap) */
static int count;                    /* entries in the table */
static int used[NBUCKETS];           /* entries per bucket */

#include "suite.h" /* the suite's common part */

#define CPOINT(where) MGTRACE_CPOINT("hentry")

/* new_entry allocates every entry of the table. */
static struct hentry *
new_entry(int key)
{
    struct hentry *e = malloc(sizeof(struct hentry));

    if (e == NULL) {
        perror("malloc");
        exit(1);
    }
    e->key = key;
    e->val = key / NBUCKETS;
    e->hn.next = NULL;
    e->hn.pprev = NULL;
    return e;
}

/* ih_insert adds an entry with key at its sorted place in its bucket. */
__attribute__((noinline)) void
ih_insert(int key)
{
    struct hhead *h = &table[key % NBUCKETS];
    struct hnode *p = NULL, *n;
    struct hentry *e;

    CPOINT("insert begin");
    for (n = h->first; n != NULL && entry_of(n)->key < key; n = n->next) {
        step();
        p = n;
    }
    e = new_entry(key);
    if (p == NULL) { /* at the head of the bucket */
        e->hn.next = h->first;
        if (h->first != NULL)
            h->first->pprev = &e->hn.next;
        h->first = &e->hn;
        e->hn.pprev = &h->first;
    } else { /* after p */
#if FAULT == 3
        if (p->next != NULL && fault_fire(300)) FAULTY(e->hn.next, p); /* FAULT 3 */ else e->hn.next = p->next;
#else
        e->hn.next = p->next;
#endif
        if (p->next != NULL)
            p->next->pprev = &e->hn.next;
        p->next = &e->hn;
#if FAULT == 1
        if (fault_fire(100)) FAULTY(e->hn.pprev, p->pprev); /* FAULT 1 */ else e->hn.pprev = &p->next;
#else
        e->hn.pprev = &p->next;
#endif
    }
    used[key % NBUCKETS]++;
    count++;
    CPOINT("insert end");
}

/* ih_delete unlinks and frees the entry at position pos of bucket b. */
__attribute__((noinline)) void
ih_delete(int b, int pos)
{
    struct hnode *d = table[b].first, *next;

    CPOINT("delete begin");
    while (pos-- > 0 && d->next != NULL) {
        step();
        d = d->next;
    }
    next = d->next;
    *d->pprev = next;
    if (next != NULL) {
#if FAULT == 2
        if (d->pprev != &table[b].first && fault_fire(200)) FAULTY(next->pprev, &d->next); /* FAULT 2 */ else next->pprev = d->pprev;
#else
        next->pprev = d->pprev;
#endif
    }
    free(entry_of(d));
    used[b]--;
    count--;
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct hnode *n;
    unsigned long sum = 0;
    int i, b, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        ih_insert((int)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0) {
            ih_insert((int)rnd(KEYS));
        } else {
            b = (int)rnd(NBUCKETS);
            while (used[b] == 0)
                b = (b + 1) % NBUCKETS;
            ih_delete(b, (int)rnd((unsigned)used[b]));
        }
    }
    steps = 0;
    for (b = 0; b < NBUCKETS; b++)
        for (n = table[b].first; n != NULL; n = n->next) {
            step();
            sum = sum * 31 + (unsigned long)entry_of(n)->key;
            walked++;
        }
    printf("ihash seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
    return 0; /* the table stays allocated: the end of the run is a C-point */
}
