/* ok_threads.c: correct program: two pthreads, each building, summing and
   freeing its own heap list; main joins them and prints their results
   (heap blocks allocated and freed by different threads, never shared).

   Output: "thread 0 sum 1275", "thread 1 sum 3775". */
// expect: none
// memcheck: no
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
    long val;
    struct node *next;
};

struct work {
    long from;
    long to;
    long sum;
};

static void *worker(void *arg)
{
    struct work *w = arg;
    struct node *head = NULL;

    for (long v = w->from; v <= w->to; v++) {
        struct node *n = malloc(sizeof *n);
        n->val = v;
        n->next = head;
        head = n;
    }
    w->sum = 0;
    while (head != NULL) {
        struct node *next = head->next;
        w->sum += head->val;
        free(head);
        head = next;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    struct work *w[2];

    for (int i = 0; i < 2; i++) {
        w[i] = malloc(sizeof *w[i]);
        w[i]->from = 1 + 50 * i;
        w[i]->to = 50 + 50 * i;
        if (pthread_create(&t[i], NULL, worker, w[i]) != 0)
            return 1;
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        printf("thread %d sum %ld\n", i, w[i]->sum);
        free(w[i]);
    }
    return 0;
}
