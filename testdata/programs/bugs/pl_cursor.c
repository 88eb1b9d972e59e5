/* pl_cursor.c: possible leak: a parser advances the only pointer it keeps
   to its buffer.

   reader_open() allocates the buffer (the root and the symptom: the
   allocation still allocated at exit) and stores its start in the global
   reader; reader_skip(), called later from main, moves that pointer past
   the header it consumed. No pointer to the buffer's start is left:
   memcheck calls the block "possibly lost".

   main prints a first line before anything else, so that stdout's buffer,
   not the reader's, is the first block of the heap: the heap's first
   address can be left on the stack by the dynamic loader, a stale copy a
   conservative scan would count as a pointer to the buffer's start.

   Output: "reader", "body: payload". */
// expect: possible_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    char *pos;
} reader;

__attribute__((noinline)) static void reader_open(const char *text)
{
    char *buf = malloc(64); //@ bug=possible_leak root=possible_leak
    strcpy(buf, text);
    reader.pos = buf;
}

__attribute__((noinline)) static void reader_skip(size_t n)
{
    reader.pos += n;
}

int main(void)
{
    printf("reader\n");
    reader_open("HDR:payload");
    reader_skip(4);
    printf("body: %s\n", reader.pos);
    return 0;
}
