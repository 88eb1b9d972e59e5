/* df_simple.c: double free, both frees in one function.

   main builds a message, frees it when the message has been sent, and
   frees it again in its cleanup at the end because `status` says the
   send failed (a stale status; the buffer was already released). The
   first free (the root) and the second (the symptom) use the same
   variable.

   Output: "sent hello", "status 1", then glibc aborts ("free(): double
   free detected in tcache 2"). */
// expect: double_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int send_msg(const char *m)
{
    printf("sent %s\n", m);
    return 1; /* wrongly reports a failure */
}

int main(void)
{
    char *msg = malloc(32);
    int status;

    strcpy(msg, "hello");
    status = send_msg(msg);
    free(msg); //@ root=double_free
    printf("status %d\n", status);
    fflush(stdout);
    if (status != 0)
        free(msg); //@ bug=double_free
    return 0;
}
