/* dp_write.c: dangling pointer write, free and write in one function.

   main counts the words of two lines into a global stats block. It frees
   the block after the first line (the root), and then stores the count
   of the second line into it (the write after free, the symptom). The
   stored field is at offset 16, past the two words glibc's tcache
   reuses, so natively nothing visible breaks.

   Output: "line 1 words 3", "line 2 words 2". */
// expect: dangling_pointer_deref
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stats {
    long lines;
    long chars;
    long words;
};

static struct stats *stats;

__attribute__((noinline)) static long count_words(const char *s)
{
    long n = 0;
    int in = 0;
    for (; *s; s++) {
        if (*s == ' ') {
            in = 0;
        } else if (!in) {
            in = 1;
            n++;
        }
    }
    return n;
}

__attribute__((noinline)) static void show(long line, long words)
{
    printf("line %ld words %ld\n", line, words);
}

int main(void)
{
    long w;

    stats = malloc(sizeof *stats);
    stats->lines = 1;
    stats->chars = (long)strlen("one two three");
    stats->words = count_words("one two three");
    show(stats->lines, stats->words);
    free(stats); //@ root=dangling_pointer_deref
    w = count_words("four five");
    stats->words = w; //@ bug=dangling_pointer_deref
    show(2, w);
    return 0;
}
