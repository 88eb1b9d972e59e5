/* dp_hash_stale.c: dangling read-modify-write through a pointer cached in
   a struct field, after a hash table deleted the entry.

   A session caches the hash-table entry of its user (s->entry, set by
   session_open() from ht_find()'s return value). ht_delete(), called
   when the user is removed, unlinks the entry from its bucket and frees
   it (the root). session_hit(), called later from main, increments
   s->entry->hits (the symptom, a read then a write of the freed entry).

   Output: "alice hits 1", "deleted alice", "hits now 2" (natively: the
   hits field, at offset 16, survives the free). */
// expect: dangling_pointer_deref
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 8

struct entry {
    struct entry *next;
    char *name;
    long hits;
};

struct session {
    int id;
    struct entry *entry;
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
            free(e); //@ root=dangling_pointer_deref
            return;
        }
    }
}

__attribute__((noinline)) static void session_open(struct session *s, int id, const char *name)
{
    s->id = id;
    s->entry = ht_find(name);
}

__attribute__((noinline)) static long session_hit(struct session *s)
{
    long hits = ++s->entry->hits; //@ bug=dangling_pointer_deref
    return hits;
}

__attribute__((noinline)) static void ht_free(void)
{
    for (int b = 0; b < NBUCKETS; b++) {
        while (buckets[b] != NULL) {
            struct entry *e = buckets[b];
            buckets[b] = e->next;
            free(e->name);
            free(e);
        }
    }
}

int main(void)
{
    struct session s;

    ht_add("alice");
    ht_add("bob");
    ht_add("carol");
    session_open(&s, 1, "alice");
    printf("alice hits %ld\n", session_hit(&s));
    ht_delete("alice");
    printf("deleted alice\n");
    printf("hits now %ld\n", session_hit(&s));
    ht_free();
    return 0;
}
