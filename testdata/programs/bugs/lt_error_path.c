/* lt_error_path.c: leak in a transaction on its error path, which is also
   a definite leak at exit.

   handle_request() is the transaction (analyse with --transaction
   handle_request). It allocates a scratch buffer (the root and the
   symptom for both classes), formats the reply into it and frees it,
   except when the request id is invalid: then it returns -1 without
   freeing. Requests 1, 2, -1 and 3 are served; the third leaks, and
   since nothing points at its buffer afterwards it is also definitely
   lost at exit. main prints a line before the first request (stdout's
   buffer is allocated outside any transaction).

   Output: "serving", "req 1 -> 6", "req 2 -> 6", "req -1 -> -1",
   "req 3 -> 6". */
// expect: leak_in_transaction,definite_leak
// memcheck: yes
// analyze: --transaction handle_request
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int handle_request(int id)
{
    char *scratch = malloc(64); //@ bug=leak_in_transaction root=leak_in_transaction bug=definite_leak root=definite_leak
    int len;
    if (id < 0)
        return -1; /* leaks scratch */
    snprintf(scratch, 64, "ok %03d", id);
    len = (int)strlen(scratch);
    free(scratch);
    return len;
}

int main(void)
{
    static const int ids[4] = {1, 2, -1, 3};

    printf("serving\n");
    for (int i = 0; i < 4; i++)
        printf("req %d -> %d\n", ids[i], handle_request(ids[i]));
    return 0;
}
