/* wild.c: a crash through a wild pointer, far from the bug that made it.

   Exercises: a SIGSEGV at a known line, with a known fault address, whose
   bad address was stored into a heap object earlier, by another function
   (the dynamic slice of the faulting store's address reaches the line
   marked CORRUPT); output flushed before the crash.

   The program builds a small table on the heap and sums it (some ordinary
   work to record), then corrupt() overwrites the table's `slot` pointer
   with the address 0x8, and finally record_total() stores through it:
   that store, on the line marked FAULT, dies with SIGSEGV, fault address
   0x8.

   Usage: wild   (no arguments)

   Output (stdout, flushed before the crash):
       sum 4950
       slot 0x8
   then the process is killed by SIGSEGV (a shell says "Segmentation
   fault", exit status 139). Nothing more is printed.

   A test should assert: killed by SIGSEGV (signal 11); stdout as above.
   In a trace: a SIGNAL event, number 11, address 0x8, at the pc of the
   store on the line marked FAULT (tests find that line by searching this
   file for the marker comment); the value 0x8 stored into t->slot on the
   line marked CORRUPT, and loaded back just before the fault. */
#include <stdio.h>
#include <stdlib.h>

struct table {
    long values[100];
    long *slot;  /* where record_total stores the sum */
};

/* fill_and_sum stores 0..99 into the table and returns their sum. */
__attribute__((noinline)) static long
fill_and_sum(struct table *t)
{
    long i, sum = 0;

    for (i = 0; i < 100; i++)
        t->values[i] = i;
    for (i = 0; i < 100; i++)
        sum += t->values[i];
    return sum;
}

/* corrupt is the bug: it stores a wild address into t->slot. */
__attribute__((noinline)) static void
corrupt(struct table *t, long bad)
{
    t->slot = (long *)bad; /* CORRUPT */
}

/* record_total stores sum through t->slot: the crash. volatile keeps the
   compiler from reasoning about the store. */
__attribute__((noinline)) static void
record_total(struct table *t, long sum)
{
    volatile long *dst = t->slot;

    *dst = sum; /* FAULT */
}

int
main(void)
{
    static long total;
    struct table *t = malloc(sizeof *t);
    long sum;

    if (t == NULL) {
        perror("malloc");
        return 1;
    }
    t->slot = &total;
    sum = fill_and_sum(t);
    printf("sum %ld\n", sum);

    corrupt(t, 0x8);
    printf("slot %p\n", (void *)t->slot);
    fflush(stdout); /* the crash would lose buffered output */

    record_total(t, sum);

    printf("not reached\n");
    return 0;
}
