/* threads.c: two threads increment one shared counter under a mutex.

   Exercises: pthread_create and pthread_join (thread create and exit
   events), a mutex (futex syscalls and atomic compare-and-swap when the
   lock is contended), thread switches, loads and stores of one global
   from two threads.

   Usage: threads [K]   each thread increments the counter K times
   (default 1000, at most 100000000).

   Output (stdout), after both threads have been joined:
       counter 2000
       counter_addr 0x55d0c2a6c040
   counter is 2*K; counter_addr is the address of the global `counter`
   (in the program's data segment: it moves with the load address of a
   PIE binary). Exit status 0.

   A test should assert `counter 2K`. In a trace: two THREAD_CREATE events
   (and two thread exits), 2K stores to counter_addr, from two threads
   other than the main one, and thread switches between them. Under
   Valgrind the threads never run at the same time, but they interleave. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long counter;
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long iterations = 1000;

/* worker adds 1 to counter `iterations` times, taking the lock for each
   increment so that the two threads' increments interleave. */
static void *
worker(void *arg)
{
    long i;

    (void)arg;
    for (i = 0; i < iterations; i++) {
        pthread_mutex_lock(&counter_lock);
        counter++;
        pthread_mutex_unlock(&counter_lock);
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    pthread_t t[2];
    int i, err;

    if (argc > 1) {
        iterations = strtol(argv[1], NULL, 10);
        if (iterations < 0 || iterations > 100000000) {
            fprintf(stderr, "usage: threads [K], 0 <= K <= 100000000\n");
            return 2;
        }
    }

    for (i = 0; i < 2; i++) {
        err = pthread_create(&t[i], NULL, worker, NULL);
        if (err != 0) {
            fprintf(stderr, "pthread_create: error %d\n", err);
            return 1;
        }
    }
    for (i = 0; i < 2; i++)
        pthread_join(t[i], NULL);

    printf("counter %ld\n", counter);
    printf("counter_addr %p\n", (void *)&counter);
    return 0;
}
