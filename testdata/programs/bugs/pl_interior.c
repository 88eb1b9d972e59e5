/* pl_interior.c: possible leak: the only pointer left to a block points
   into its middle.

   ring_new() allocates a buffer with a 16-byte header (the root and the
   symptom: the allocation of the block still allocated at exit) and keeps
   only the payload's address, header + 16, in the global `ring`. At exit
   nothing points at the block's start, only inside it: memcheck calls it
   "possibly lost" (and reports it); a checker that maps pointers to
   blocks by range still finds a pointer into it.

   Output: "ring hello". */
// expect: possible_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *ring;

__attribute__((noinline)) static void ring_new(size_t n)
{
    char *block = malloc(16 + n); //@ bug=possible_leak root=possible_leak
    memset(block, 0, 16);
    ring = block + 16;
}

int main(void)
{
    ring_new(32);
    strcpy(ring, "hello");
    printf("ring %s\n", ring);
    return 0;
}
