/* lt_history.c: leak in a transaction: each request leaves a block behind
   in a global history list, freed only at shutdown.

   handle_request() is the transaction (analyse with --transaction
   handle_request). Each call allocates a history entry (the root and the
   symptom: an allocation made during the call and still allocated when
   it returns) and links it into the global history; nothing trims it.
   main prints a line before the first request (so that stdout's buffer is
   allocated outside any transaction), serves four requests, and at
   shutdown frees the history: no block is left when main returns, so
   this is neither a definite nor a possible leak, and memcheck sees
   nothing.

   Output: "serving", "req 1 -> 2", "req 2 -> 4", "req 3 -> 6",
   "req 4 -> 8", "history 4". */
// expect: leak_in_transaction
// memcheck: no (every block is freed before exit; memcheck has no notion of a transaction)
// analyze: --transaction handle_request
#include <stdio.h>
#include <stdlib.h>

struct hist {
    int id;
    int result;
    struct hist *next;
};

static struct hist *history;

__attribute__((noinline)) int handle_request(int id)
{
    struct hist *h = malloc(sizeof *h); //@ bug=leak_in_transaction root=leak_in_transaction
    h->id = id;
    h->result = 2 * id;
    h->next = history;
    history = h;
    return h->result;
}

__attribute__((noinline)) static int history_free(void)
{
    int n = 0;
    while (history != NULL) {
        struct hist *next = history->next;
        free(history);
        history = next;
        n++;
    }
    return n;
}

int main(void)
{
    printf("serving\n");
    for (int id = 1; id <= 4; id++) {
        int r = handle_request(id);
        printf("req %d -> %d\n", id, r);
    }
    printf("history %d\n", history_free());
    return 0;
}
