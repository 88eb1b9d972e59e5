/* ok_hash.c: correct program: a chained hash table with insert, lookup,
   delete and teardown; a session keeps the key, not the entry, and looks
   the entry up again each time (the shape of dp_hash_stale.c, done
   right).

   Output: "alice 1", "alice 2", "deleted alice", "alice gone", "bob 1",
   "entries 2". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 8

struct entry {
    struct entry *next;
    char *name;
    long hits;
};

static struct entry *buckets[NBUCKETS];

__attribute__((noinline)) static unsigned hash(const char *s)
{
    unsigned h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h % NBUCKETS;
}

__attribute__((noinline)) static void ht_add(const char *name)
{
    struct entry *e = malloc(sizeof *e);
    unsigned b = hash(name);
    e->name = strdup(name);
    e->hits = 0;
    e->next = buckets[b];
    buckets[b] = e;
}

__attribute__((noinline)) static struct entry *ht_find(const char *name)
{
    for (struct entry *e = buckets[hash(name)]; e != NULL; e = e->next)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

__attribute__((noinline)) static void ht_delete(const char *name)
{
    for (struct entry **pp = &buckets[hash(name)]; *pp != NULL; pp = &(*pp)->next) {
        struct entry *e = *pp;
        if (strcmp(e->name, name) == 0) {
            *pp = e->next;
            free(e->name);
            free(e);
            return;
        }
    }
}

__attribute__((noinline)) static void hit(const char *name)
{
    struct entry *e = ht_find(name);
    if (e == NULL) {
        printf("%s gone\n", name);
        return;
    }
    printf("%s %ld\n", name, ++e->hits);
}

int main(void)
{
    int n = 0;

    ht_add("alice");
    ht_add("bob");
    ht_add("carol");
    hit("alice");
    hit("alice");
    ht_delete("alice");
    printf("deleted alice\n");
    hit("alice");
    hit("bob");
    for (int b = 0; b < NBUCKETS; b++) {
        while (buckets[b] != NULL) {
            struct entry *e = buckets[b];
            buckets[b] = e->next;
            free(e->name);
            free(e);
            n++;
        }
    }
    printf("entries %d\n", n);
    return 0;
}
