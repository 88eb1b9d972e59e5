/* np_search.c: NULL dereference where the NULL was stored in the same
   function (a search result that stays NULL when nothing matches).

   main sets res.best = NULL (the root), asks scan() to store the best
   record above a limit into res.best, and prints res.best->score (the
   symptom) without checking: with the limit 100 nothing matches. score is
   at offset 0, so the fault address is 0.

   Output: "best above 10: 42", then SIGSEGV. */
// expect: null_pointer_deref
// memcheck: yes
// native: SIGSEGV
#include <stdio.h>
#include <stdlib.h>

struct rec {
    int score;
    int id;
};

struct result {
    struct rec *best;
    int seen;
};

__attribute__((noinline)) static void scan(struct result *res, struct rec **recs, int n, int limit)
{
    for (int i = 0; i < n; i++) {
        res->seen++;
        if (recs[i]->score > limit && (res->best == NULL || recs[i]->score > res->best->score))
            res->best = recs[i];
    }
}

int main(void)
{
    static const int scores[4] = {7, 42, 13, 9};
    struct rec *recs[4];
    struct result res;

    for (int i = 0; i < 4; i++) {
        recs[i] = malloc(sizeof *recs[i]);
        recs[i]->score = scores[i];
        recs[i]->id = i;
    }
    res.best = NULL;
    res.seen = 0;
    scan(&res, recs, 4, 10);
    printf("best above 10: %d\n", res.best->score);
    fflush(stdout);
    res.best = NULL; //@ root=null_pointer_deref
    scan(&res, recs, 4, 100);
    printf("best above 100: %d\n", res.best->score); //@ bug=null_pointer_deref
    for (int i = 0; i < 4; i++)
        free(recs[i]);
    return 0;
}
