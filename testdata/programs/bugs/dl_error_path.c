/* dl_error_path.c: definite leak on an early-return error path.

   parse_pair() allocates a scratch copy of its input (the root and the
   symptom), and returns early without freeing it when the input has no
   '='. Of the three inputs one is malformed, so one block leaks.

   Output: "a=1 ok", "junk error", "b=22 ok", "parsed 2". */
// expect: definite_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int parse_pair(const char *in, long *value)
{
    char *scratch = strdup(in); //@ bug=definite_leak root=definite_leak
    char *eq = strchr(scratch, '=');
    if (eq == NULL)
        return -1; /* leaks scratch */
    *value = strtol(eq + 1, NULL, 10);
    free(scratch);
    return 0;
}

int main(void)
{
    static const char *inputs[3] = {"a=1", "junk", "b=22"};
    int parsed = 0;

    for (int i = 0; i < 3; i++) {
        long v = 0;
        if (parse_pair(inputs[i], &v) == 0) {
            printf("%s ok\n", inputs[i]);
            parsed++;
        } else {
            printf("%s error\n", inputs[i]);
        }
    }
    printf("parsed %d\n", parsed);
    return 0;
}
