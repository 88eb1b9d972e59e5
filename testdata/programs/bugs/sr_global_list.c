/* sr_global_list.c: still reachable (the dissertation's possible leak): a list whose head is a global, never
   freed.

   record() appends an event node to the global list (the root and the
   symptom: the allocation of the nodes still allocated when main
   returns). main records four events, prints them and returns; the first
   node is reachable from the global head and each other node from its
   predecessor (all "still reachable").

   Output: "events start load run stop". */
// expect: still_reachable
// analyze: --all
// memcheck: no (still reachable: listed only with --show-leak-kinds=reachable, not an error)
#include <stdio.h>
#include <stdlib.h>

struct event {
    const char *name;
    struct event *next;
};

static struct event *events;
static struct event **events_tail = &events;

__attribute__((noinline)) static void record(const char *name)
{
    struct event *e = malloc(sizeof *e); //@ bug=still_reachable root=still_reachable
    e->name = name;
    e->next = NULL;
    *events_tail = e;
    events_tail = &e->next;
}

int main(void)
{
    record("start");
    record("load");
    record("run");
    record("stop");
    printf("events");
    for (struct event *e = events; e != NULL; e = e->next)
        printf(" %s", e->name);
    printf("\n");
    return 0;
}
