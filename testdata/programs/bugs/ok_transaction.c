/* ok_transaction.c: correct program for --transaction handle_request:
   each request allocates a scratch buffer and a parsed token, and frees
   both before it returns, on the error path too (the shape of
   lt_error_path.c and lt_history.c, done right). Results are kept by
   value in a global array.

   Output: "serving", "req get -> 3", "req bad! -> -1", "req delete -> 6",
   "total 9". */
// expect: none
// memcheck: no
// analyze: --transaction handle_request
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct token {
    char text[16];
    int len;
};

static int results[8];
static int nresults;

__attribute__((noinline)) static struct token *new_token(const char *s)
{
    struct token *t = malloc(sizeof *t);
    snprintf(t->text, sizeof t->text, "%s", s);
    t->len = (int)strlen(t->text);
    return t;
}

__attribute__((noinline)) int handle_request(const char *req)
{
    char *scratch = malloc(64);
    struct token *t;
    int len;

    snprintf(scratch, 64, "%s", req);
    if (strchr(scratch, '!') != NULL) {
        free(scratch);
        return -1;
    }
    t = new_token(scratch);
    len = t->len;
    free(t);
    free(scratch);
    results[nresults++] = len;
    return len;
}

int main(void)
{
    static const char *reqs[3] = {"get", "bad!", "delete"};
    int total = 0;

    printf("serving\n");
    for (int i = 0; i < 3; i++)
        printf("req %s -> %d\n", reqs[i], handle_request(reqs[i]));
    for (int i = 0; i < nresults; i++)
        total += results[i];
    printf("total %d\n", total);
    return 0;
}
