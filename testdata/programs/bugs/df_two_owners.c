/* df_two_owners.c: double free of a payload that two structures own: a
   list node's data field and a "recently used" array.

   insert() links entries, each with a malloc'd data string, into a global
   list. touch() records the data of the entry it finds in the global
   array `recent`; the array was meant to hold copies (strdup) but holds
   the entries' own strings. evict_recent() frees what `recent` points to
   (the first free, the root), and list_free() at shutdown frees every
   entry's data (the second free of an evicted string, the symptom). The
   two pointers are copies of e->data made in touch(), two functions away.

   Output: "touched k20 k40", "sum 100", then glibc aborts in list_free
   ("free(): double free detected in tcache 2"). */
// expect: double_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    int key;
    char *data;
    struct entry *next;
};

static struct entry *head;
static char *recent[2];
static int nrecent;

__attribute__((noinline)) static void insert(int key)
{
    struct entry *e = malloc(sizeof *e);
    char buf[16];
    snprintf(buf, sizeof buf, "k%d", key);
    e->key = key;
    e->data = strdup(buf);
    e->next = head;
    head = e;
}

__attribute__((noinline)) static const char *touch(int key)
{
    for (struct entry *e = head; e != NULL; e = e->next) {
        if (e->key == key) {
            recent[nrecent++ % 2] = e->data; /* the entry's string, not a copy */
            return e->data;
        }
    }
    return "-";
}

__attribute__((noinline)) static void evict_recent(void)
{
    for (int i = 0; i < nrecent && i < 2; i++) {
        free(recent[i]); //@ root=double_free
        recent[i] = NULL;
    }
    nrecent = 0;
}

__attribute__((noinline)) static int list_sum(void)
{
    int s = 0;
    for (struct entry *e = head; e != NULL; e = e->next)
        s += e->key;
    return s;
}

__attribute__((noinline)) static void list_free(void)
{
    while (head != NULL) {
        struct entry *next = head->next;
        free(head->data); //@ bug=double_free
        free(head);
        head = next;
    }
}

int main(void)
{
    for (int k = 1; k <= 4; k++)
        insert(k * 10);
    printf("touched %s", touch(20));
    printf(" %s\n", touch(40));
    printf("sum %d\n", list_sum());
    fflush(stdout);
    evict_recent();
    list_free();
    return 0;
}
