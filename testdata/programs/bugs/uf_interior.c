/* uf_interior.c: unmatched free of an interior pointer, made by pointer
   arithmetic in one function and freed in another.

   read_word() strdup's a line and returns skip_blanks()'s result, which is
   the copy's address plus the number of leading blanks (`return s + n;`,
   the root: the arithmetic generates the bad pointer). main prints the
   word and hands it to drop_word(), which frees it (the symptom): a
   pointer 3 bytes into the block, not its start.

   Output: "word 'hello' len 5", then glibc aborts ("free(): invalid
   pointer"). */
// expect: unmatched_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *skip_blanks(char *s)
{
    size_t n = strspn(s, " ");
    return s + n; //@ root=unmatched_free
}

__attribute__((noinline)) static char *read_word(const char *line)
{
    char *copy = strdup(line);
    return skip_blanks(copy);
}

__attribute__((noinline)) static void drop_word(char *w)
{
    free(w); //@ bug=unmatched_free
}

int main(void)
{
    char *w = read_word("   hello");
    printf("word '%s' len %zu\n", w, strlen(w));
    fflush(stdout);
    drop_word(w);
    return 0;
}
