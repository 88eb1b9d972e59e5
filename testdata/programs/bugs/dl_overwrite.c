/* dl_overwrite.c: definite leak: the only pointer to a block is
   overwritten with the address of a new one.

   main allocates a buffer for a first "configuration" (the root and the
   symptom: the allocation of the block that leaks), then allocates the
   buffer for a second one into the same variable without freeing the
   first. Only the second is freed.

   Output: "config 'first' 5", "config 'second' 6". */
// expect: definite_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void show(const char *cfg)
{
    printf("config '%s' %zu\n", cfg, strlen(cfg));
}

int main(void)
{
    char *cfg = malloc(32); //@ bug=definite_leak root=definite_leak
    snprintf(cfg, 32, "%s", "first");
    show(cfg);
    cfg = malloc(32);
    snprintf(cfg, 32, "%s", "second");
    show(cfg);
    free(cfg);
    return 0;
}
