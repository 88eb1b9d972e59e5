/* np_copy_chain.c: a NULL stored into a struct field, copied through a
   struct copy, a heap field and a return value, and dereferenced far away.

   opts_defaults() sets o->output = NULL (the root: "no output file").
   job_new() copies the whole options struct into the job (j->o = *o),
   job_output() returns j->o.output, and job_run() reads the first
   character of the output name (the symptom), assuming every job has one.

   Output: "job build verbose 0", then SIGSEGV (fault address 0). */
// expect: null_pointer_deref
// memcheck: yes
// native: SIGSEGV
#include <stdio.h>
#include <stdlib.h>

struct opts {
    const char *output;
    long verbose;
};

struct job {
    const char *name;
    struct opts o;
};

__attribute__((noinline)) static void opts_defaults(struct opts *o)
{
    o->output = NULL; //@ root=null_pointer_deref
    o->verbose = 0;
}

__attribute__((noinline)) static struct job *job_new(const char *name, const struct opts *o)
{
    struct job *j = malloc(sizeof *j);
    j->name = name;
    j->o = *o;
    return j;
}

__attribute__((noinline)) static const char *job_output(const struct job *j)
{
    return j->o.output;
}

__attribute__((noinline)) static int job_run(const struct job *j)
{
    const char *out = job_output(j);
    printf("job %s verbose %ld\n", j->name, j->o.verbose);
    fflush(stdout);
    return out[0] == '-'; //@ bug=null_pointer_deref
}

int main(void)
{
    struct opts o;
    struct job *j;
    int to_stdout;

    opts_defaults(&o);
    j = job_new("build", &o);
    to_stdout = job_run(j);
    printf("stdout %d\n", to_stdout);
    free(j);
    return 0;
}
