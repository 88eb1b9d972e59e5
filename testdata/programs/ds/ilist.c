/* ilist.c: an intrusive doubly linked list in the style of the Linux
   kernel's list_head, with injectable faults (ours: the fault-location
   paper has no intrusive structure; issue 14 item 1).

   What it does: builds a list of BASE (1000) tasks sorted by key, by
   sorted inserts, then runs OPS (500) random operations: insert a task
   with a random key at its sorted place, or delete the task at a random
   position. Each task is one malloc'd struct itask (new_task) that
   embeds its links (struct ilink link) after two ints, so the links point
   8 bytes into the tasks: a task is got back from its link with
   container_of. The list is circular through a sentinel in a global
   (head), which is no heap node.

   C-points: MGTRACE_CPOINT("itask") at the start and at the end of
   il_insert and il_delete (spec: ilist.spec, which declares `itask LINK
   3;`: a pointer to slot 3, the embedded link, is an edge to the task).

   Usage: ilist [SEED [BASE [OPS]]]   (defaults 1 1000 500)
   Build: gcc -g -O1 -fno-omit-frame-pointer -I include [-DFAULT=k] ilist.c

   Output (stdout): one line
       ilist seed S: count N walked N checksum XXXXXXXX
   With FAULT=k, stderr gets "FAULT k fired at op N". There is no
   -DSELFCHECK (the suite's self-check knows nodes by their heads only).

   Faults (-DFAULT=k; each fires once, at the first chance at or after
   the given op of the second phase; the faulty store is on the line
   marked with the comment FAULT k):
   1  list_add_between: the new task's next link gets next->next instead
      of next: it points at the task after next, which does not point
      back. From op 100.
   2  list_unlink: unlinking a task sets next->prev = prev->prev instead
      of prev: next points back at the task before prev, which does not
      point at it. From op 200.
   3  list_add_between: next->prev = prev, the value the field already
      holds, instead of the new task's link (a store that changes nothing
      the graph sees): the new task points at next, which does not point
      back. From op 300. */
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

/* struct ilink is the embedded link, as the kernel's struct list_head. */
struct ilink {
    struct ilink *next;
    struct ilink *prev;
};

/* struct itask is a list element: slots key, prio, link.next, link.prev. */
struct itask {
    int key;
    int prio;
    struct ilink link;
};

#define task_of(l) ((struct itask *)((char *)(l) - offsetof(struct itask, link)))

static struct ilink head = {&head, &head}; /* the sentinel (outside the heap) */
static int count;                          /* tasks in the list */

#include "suite.h" /* the suite's common part */

#define CPOINT(where) MGTRACE_CPOINT("itask")

/* new_task allocates every task of the list. */
static struct itask *
new_task(int key)
{
    struct itask *t = malloc(sizeof(struct itask));

    if (t == NULL) {
        perror("malloc");
        exit(1);
    }
    t->key = key;
    t->prio = key % 7;
    t->link.next = NULL;
    t->link.prev = NULL;
    return t;
}

/* list_add_between links l between prev and next. */
static void
list_add_between(struct ilink *l, struct ilink *prev, struct ilink *next)
{
#if FAULT == 3
    if (next != &head && fault_fire(300)) FAULTY(next->prev, prev); /* FAULT 3 */ else next->prev = l;
#else
    next->prev = l;
#endif
#if FAULT == 1
    if (next != &head && next->next != &head && fault_fire(100)) FAULTY(l->next, next->next); /* FAULT 1 */ else l->next = next;
#else
    l->next = next;
#endif
    l->prev = prev;
    prev->next = l;
}

/* list_unlink takes l out of its list. */
static void
list_unlink(struct ilink *l)
{
    struct ilink *prev = l->prev, *next = l->next;

#if FAULT == 2
    if (next != &head && prev != &head && prev->prev != &head && fault_fire(200)) FAULTY(next->prev, prev->prev); /* FAULT 2 */ else next->prev = prev;
#else
    next->prev = prev;
#endif
    prev->next = next;
    l->next = NULL;
    l->prev = NULL;
}

/* il_insert links a new task with key at its sorted place. */
__attribute__((noinline)) void
il_insert(int key)
{
    struct ilink *pos = head.next;
    struct itask *t;

    CPOINT("insert begin");
    t = new_task(key);
    while (pos != &head && task_of(pos)->key < key) {
        step();
        pos = pos->next;
    }
    list_add_between(&t->link, pos->prev, pos);
    count++;
    CPOINT("insert end");
}

/* il_delete unlinks and frees the task at position pos (0 is the first). */
__attribute__((noinline)) void
il_delete(int pos)
{
    struct ilink *l = head.next;

    CPOINT("delete begin");
    while (pos-- > 0 && l->next != &head) {
        step();
        l = l->next;
    }
    list_unlink(l);
    free(task_of(l));
    count--;
    CPOINT("delete end");
}

int
main(int argc, char **argv)
{
    struct ilink *l;
    unsigned long sum = 0;
    int i, walked = 0;

    parse_args(argc, argv);
    for (i = 0; i < n_base; i++) {
        steps = 0;
        il_insert((int)rnd(KEYS));
    }
    for (op_no = 0; op_no < n_ops; op_no++) {
        steps = 0;
        if (count == 0 || rnd(2) == 0)
            il_insert((int)rnd(KEYS));
        else
            il_delete((int)rnd((unsigned)count));
    }
    steps = 0;
    for (l = head.next; l != &head; l = l->next) {
        step();
        sum = sum * 31 + (unsigned long)task_of(l)->key;
        walked++;
    }
    printf("ilist seed %s: count %d walked %d checksum %08lx\n",
           argc > 1 ? argv[1] : "1", count, walked, sum & 0xffffffffUL);
    return 0; /* the list stays allocated: the end of the run is a C-point */
}
