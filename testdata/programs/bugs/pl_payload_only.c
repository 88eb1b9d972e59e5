/* pl_payload_only.c: possible leak: a message keeps only a pointer to its
   payload, past a length prefix, in a global queue.

   msg_new() allocates one block for an 8-byte length and the text (the
   root and the symptom: the allocation still allocated at exit) and
   returns the address of the text, which queue_push() keeps in the global
   array `queue`. Nothing keeps the block's start: memcheck calls the
   blocks "possibly lost".

   Output: "queued alpha", "queued beta". */
// expect: possible_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *queue[4];
static int queued;

__attribute__((noinline)) static char *msg_new(const char *text)
{
    size_t n = strlen(text);
    long *block = malloc(sizeof(long) + n + 1); //@ bug=possible_leak root=possible_leak
    block[0] = (long)n;
    memcpy(block + 1, text, n + 1);
    return (char *)(block + 1);
}

__attribute__((noinline)) static void queue_push(char *m)
{
    queue[queued++] = m;
}

int main(void)
{
    queue_push(msg_new("alpha"));
    queue_push(msg_new("beta"));
    for (int i = 0; i < queued; i++)
        printf("queued %s\n", queue[i]);
    return 0;
}
