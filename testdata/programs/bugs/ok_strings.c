/* ok_strings.c: correct program: strings in exact-size heap buffers
   (strlen + 1 bytes), handled with strlen, strcpy, memcpy, strcmp, strchr
   and strcat.

   A good false-alarm test: glibc's vectorised string functions read
   whole aligned 16- or 32-byte words, past the terminating NUL and past
   the end of the block (never across a page boundary). Those reads are
   not bugs, and none of their bytes decide anything. The block sizes (1,
   6, 14, 17 and 31 bytes with the NUL) end blocks at many alignments.

   Output: one line per word "WORD len N copy ok" (the first word is
   empty), then "joined
   a+hello+concatenation+0123456789abcdef+the-quick-brown-fox-jumps-over"
   and "found 4". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *dup_exact(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    memcpy(d, s, n);
    return d;
}

__attribute__((noinline)) static char *copy_exact(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    strcpy(d, s);
    return d;
}

int main(void)
{
    static const char *words[5] = {
        "", "hello", "concatenation", "0123456789abcdef",
        "the-quick-brown-fox-jumps-over",
    };
    char *copies[5];
    size_t total = 0;
    char *joined;
    int found = 0;

    for (int i = 0; i < 5; i++) {
        char *a = dup_exact(words[i]);
        copies[i] = copy_exact(a);
        printf("%s len %zu copy %s\n", a, strlen(a), strcmp(a, copies[i]) == 0 ? "ok" : "bad");
        total += strlen(copies[i]) + 1;
        free(a);
    }
    joined = malloc(total + 1);
    strcpy(joined, "a");
    for (int i = 1; i < 5; i++) {
        strcat(joined, "+");
        strcat(joined, copies[i]);
    }
    printf("joined %s\n", joined);
    for (int i = 0; i < 5; i++) {
        if (strchr(copies[i], 'o') != NULL || strchr(copies[i], '\0') == copies[i])
            found++;
        free(copies[i]);
    }
    printf("found %d\n", found);
    free(joined);
    return 0;
}
