/* threads.c: a value computed by one thread and used by main after join.

   Exercises: memory dependences across threads (main -> thread A through
   the global in_a and through pthread_create's argument, thread A ->
   main through the global shared_a), a thread function's parameter
   spill, and a second thread whose value must stay out.

   Output: `ra 213 b 40 junk 35`; exit 0.

   Criterion ra (`long ra = shared_a * 3;`, in main after both joins):
   loads shared_a, whose 8 bytes were last written by thread A's
   `shared_a = v;`. v = k * 10 + 1 reads k; k = *p reads p and in_a's
   bytes (written by main's `in_a = base + 1`, which reads base: `long
   base = 6`). p is arg, spilled by worker_a's `{` line from rdi, which
   start_thread (libc, in thread A) loaded from the thread descriptor
   where pthread_create (libc, in main) stored its 4th argument, set on
   main's `pthread_create(&ta, ...)` line (lea in_a(%rip)). That line is
   in for a second reason: thread A's whole body inherits the control
   dependence of start_thread's call of worker_a, which in glibc 2.36's
   source is under `if (pd->c11)`, a flag pthread_create computes from
   its attr argument (NULL, set on that same line).
   In: base, in_a, the pthread_create of A, worker_a's `{`, `p = arg`,
   k, v, `shared_a = v`.
   Out: worker_a's junk lines (junk_a is another global); worker_b
   entirely (its `{`, body, the shared_b store); in_b; the
   pthread_create of B; both joins (main's load of shared_a is not
   control dependent on them: no branch of main is pending, and libc's
   branches are in other function invocations); main's `{` (main reads
   no argument); the printf.
   B is created after A on purpose: A's creation then cannot read libc
   state (stack list, locks) that B's creation wrote, and what thread A
   reads on the way to shared_a (its own descriptor's fields, in_a) B's
   creation does not write. In the reverse order libc could tie A's
   descriptor to B's pthread_create line.
   Line attribution (gcc 12 -O0, objdump -d -l): worker_a's `{` line
   holds push rbp; mov rsp,rbp; mov %rdi,arg(%rbp); `long *p = arg;` is
   a load and a store on its own line; `return NULL;` sets eax to 0 on its
   line (out). */
#include <pthread.h>
#include <stdio.h>

static long in_a;
static long in_b;
static long shared_a;
static long shared_b;
static long junk_a;

static void *
worker_a(void *arg)
{                                   //@ in=ra
    long *p = arg;                  //@ in=ra
    long junk = 5;
    long k = *p;                    //@ in=ra
    junk = junk * k;
    long v = k * 10 + 1;            //@ in=ra
    shared_a = v;                   //@ in=ra
    junk_a = junk;
    return NULL;
}

static void *
worker_b(void *arg)
{
    long *p = arg;
    long w = *p * 4;
    shared_b = w;
    return NULL;
}

int
main(void)
{
    pthread_t ta, tb;
    long base = 6;                                  //@ in=ra
    in_a = base + 1;                                //@ in=ra
    in_b = 10;
    pthread_create(&ta, NULL, worker_a, &in_a);     //@ in=ra
    pthread_create(&tb, NULL, worker_b, &in_b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    long ra = shared_a * 3;                         //@ crit=ra
    printf("ra %ld b %ld junk %ld\n", ra, shared_b, junk_a);
    return 0;
}
