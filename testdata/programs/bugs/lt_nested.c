/* lt_nested.c: leak in a transaction where the block is allocated three
   calls below the transaction and kept in a global table.

   handle_request() is the transaction (analyse with --transaction
   handle_request). It calls parse_request(), which calls new_token();
   new_token() allocates the token (the root and the symptom: an
   allocation made during the call and still allocated when it returns),
   parse_request() returns it and handle_request() stores it in the global
   `tokens` table to "remember" the request. main prints a line before
   the first request, serves three, and frees the table at shutdown, so
   nothing is left at exit and memcheck sees nothing.

   Output: "serving", "req get -> 3", "req put -> 3", "req delete -> 6",
   "tokens 3". */
// expect: leak_in_transaction
// memcheck: no (every block is freed before exit; memcheck has no notion of a transaction)
// analyze: --transaction handle_request
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct token {
    char text[16];
    int len;
};

static struct token *tokens[8];
static int ntokens;

__attribute__((noinline)) static struct token *new_token(const char *s)
{
    struct token *t = malloc(sizeof *t); //@ bug=leak_in_transaction root=leak_in_transaction
    snprintf(t->text, sizeof t->text, "%s", s);
    t->len = (int)strlen(t->text);
    return t;
}

__attribute__((noinline)) static struct token *parse_request(const char *req)
{
    struct token *t = new_token(req);
    return t;
}

__attribute__((noinline)) int handle_request(const char *req)
{
    struct token *t = parse_request(req);
    tokens[ntokens++] = t;
    return t->len;
}

int main(void)
{
    static const char *reqs[3] = {"get", "put", "delete"};

    printf("serving\n");
    for (int i = 0; i < 3; i++)
        printf("req %s -> %d\n", reqs[i], handle_request(reqs[i]));
    printf("tokens %d\n", ntokens);
    for (int i = 0; i < ntokens; i++)
        free(tokens[i]);
    return 0;
}
