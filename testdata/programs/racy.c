/* racy.c: a data race for interleaving control (record --preempt,
   --sched-seed). Two threads each increment a shared counter K times
   (default 1000) without a lock; an increment reads the counter, calls
   bump() (never inlined), and writes the result back, so the read and the
   write are in different superblocks and a thread switch between them
   loses the other thread's increments. No sleeps, no yields, no other
   synchronisation than pthread_create and pthread_join.

   Prints "counter N" (N <= 2K) and exits 0. Natively N varies with the
   machine; under Valgrind without --preempt each thread runs all of its
   increments in one time slice and N = 2K; with --preempt the lost
   updates depend on the seed (and one seed gives one N).

   Tests assert: the line's form; N = 2K without --preempt; several seeds
   give at least two different N; the same seed gives the same N and the
   same THREAD_SWITCH events. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long counter;
static long iterations = 1000;

/* bump is a real call: it ends the superblock of the read. */
__attribute__((noinline, noipa)) static long
bump(long v)
{
    return v + 1;
}

static void *
worker(void *arg)
{
    long i;

    (void)arg;
    for (i = 0; i < iterations; i++) {
        long v = counter; /* READ */
        counter = bump(v); /* WRITE */
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    pthread_t t[2];
    int i;

    if (argc > 1) {
        char *end;
        iterations = strtol(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0' || iterations < 1 || iterations > 100000000) {
            fprintf(stderr, "usage: %s [K] (1 <= K <= 100000000)\n", argv[0]);
            return 2;
        }
    }
    for (i = 0; i < 2; i++) {
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            fprintf(stderr, "racy: pthread_create failed\n");
            return 1;
        }
    }
    for (i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("counter %ld\n", counter);
    return 0;
}
