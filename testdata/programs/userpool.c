/* userpool.c: a program with its own allocator, for analyze bugs
   --allocator pool_alloc --deallocator pool_free.

   pool_alloc() carves fixed 32-byte slots out of a static arena and keeps
   freed slots on a free list; pool_free() puts a slot back. The program
   allocates two slots, frees the first (line marked FIRST-FREE), frees it
   again (line marked SECOND-FREE: the bug, which the pool does not
   notice), then writes 40 bytes into the second slot (line marked
   OVERFLOW: 8 bytes past its 32).

   Output: "a b", "freed twice", "wrote 40"; exit 0. Without the
   --allocator flags no block exists for the checker (the arena is a
   global); with them the double free and the overflow are found. */
#include <stdio.h>
#include <string.h>

#define SLOT 32
#define SLOTS 16

static unsigned char arena[SLOT * SLOTS] __attribute__((aligned(16)));
static void *free_list[SLOTS];
static int nfree, next_slot;

__attribute__((noinline)) void *pool_alloc(size_t size)
{
    if (size > SLOT)
        return NULL;
    if (nfree > 0)
        return free_list[--nfree];
    if (next_slot == SLOTS)
        return NULL;
    return &arena[SLOT * next_slot++];
}

__attribute__((noinline)) void pool_free(void *p)
{
    if (p != NULL && nfree < SLOTS)
        free_list[nfree++] = p;
}

__attribute__((noinline)) static void fill(char *dst, size_t n)
{
    memset(dst, 'x', n); /* OVERFLOW */
}

int main(void)
{
    char *a = pool_alloc(SLOT);
    char *b = pool_alloc(SLOT);
    strcpy(a, "a");
    strcpy(b, "b");
    printf("%s %s\n", a, b);
    pool_free(a); /* FIRST-FREE */
    pool_free(a); /* SECOND-FREE */
    printf("freed twice\n");
    fill(b, SLOT + 8);
    printf("wrote %d\n", SLOT + 8);
    return 0;
}
