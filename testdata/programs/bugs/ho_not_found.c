/* ho_not_found.c: heap buffer overflow through a "not found" index: a
   search returns the table's length when the key is missing, and the
   caller's caller uses it as a slot index.

   table_new() allocates n 16-byte slots (the root). find_slot() returns
   the slot of a key, or n when the key is absent; slot_for() passes that
   on; table_bump() increments slots[i].count (the symptom: for a missing
   key i == n, so the read-modify-write hits the 16 bytes just past the
   block). Natively those bytes are the next chunk's header: the count
   field lands on its size word, and glibc aborts when that block (the
   names buffer) is freed.

   Output: "bumped red green red", "red 2 green 1 blue 0", then glibc
   aborts at free ("munmap_chunk(): invalid pointer"). */
// expect: heap_buffer_overflow
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    const char *key;
    long count;
};

struct table {
    struct slot *slots;
    int n;
};

__attribute__((noinline)) static void table_new(struct table *t, const char **keys, int n)
{
    t->slots = malloc(n * sizeof *t->slots); //@ root=heap_buffer_overflow
    t->n = n;
    for (int i = 0; i < n; i++) {
        t->slots[i].key = keys[i];
        t->slots[i].count = 0;
    }
}

__attribute__((noinline)) static int find_slot(const struct table *t, const char *key)
{
    int i = 0;
    while (i < t->n && strcmp(t->slots[i].key, key) != 0)
        i++;
    return i; /* t->n when the key is missing */
}

__attribute__((noinline)) static int slot_for(const struct table *t, const char *key)
{
    return find_slot(t, key);
}

__attribute__((noinline)) static void table_bump(struct table *t, const char *key)
{
    int i = slot_for(t, key);
    t->slots[i].count++; //@ bug=heap_buffer_overflow
}

int main(void)
{
    static const char *keys[3] = {"red", "green", "blue"};
    struct table t;
    char *names;

    table_new(&t, keys, 3);
    names = malloc(64);
    snprintf(names, 64, "%s %s %s", keys[0], keys[1], keys[2]);
    table_bump(&t, "red");
    table_bump(&t, "green");
    table_bump(&t, "red");
    printf("bumped red green red\n");
    table_bump(&t, "purple");
    for (int i = 0; i < t.n; i++)
        printf("%s%s %ld", i ? " " : "", t.slots[i].key, t.slots[i].count);
    printf("\n");
    fflush(stdout);
    free(names);
    free(t.slots);
    return 0;
}
