/* dlpool.c: a program with its own small dlmalloc-style allocator (seed
   001, Figures 3 and 7): chunks carved out of one big free chunk, a
   doubly-linked free list with head and tail sentinels, and boundary tags
   that let free() consolidate a chunk with a free neighbour.

   Exercises: memory management inside the program, which the MG++ graph
   sees without knowing the allocator. pool_alloc splits the free chunk it
   takes (the remainder's address is stored into the free list: line
   marked SPLIT), pool_free links the chunk into the free list and, when
   the chunk below it is free, consolidates the two (the lower neighbour's
   address is computed from the freed chunk's address: line marked MERGE).

   Chunk layout (dlmalloc's): prev_size (8 bytes, the size of the chunk
   below when that one is free, else 0), size (8 bytes, bit 0 set while in
   use), then the user's bytes; fd and bk, the free-list links, overlay
   the user's first 16 bytes while the chunk is free. The arena is one
   anonymous mapping of 64 KiB: the head and tail sentinels (32 bytes each,
   always in use), the big free chunk, and a 32-byte in-use fence at the
   end.

   The program: tmp2..tmp6 = pool_alloc(16) (adjacent 32-byte chunks,
   carved in order from the big free chunk), tmp2..tmp5 linked into a list
   tmp2 -> tmp3 -> tmp4 -> tmp5 through their `next` fields (tmp6 stays in
   use, so that tmp5 is not next to the free rest); then pool_free(tmp2),
   pool_free(tmp4) and pool_free(tmp5): tmp5's lower neighbour tmp4 is
   free, so tmp5 is consolidated into tmp4's chunk.

   Usage: dlpool   (no arguments)

   Output (stdout); addresses change from run to run:
       arena A
       tmp2 A+0x50 tmp3 A+0x70 tmp4 A+0x90 tmp5 A+0xb0   (as addresses)
       free list: 3 chunks, sizes 64 32 65280
   (the free list, front first: tmp4's chunk consolidated with tmp5's,
   tmp2's, and the rest of the big chunk).
   Exit status 0.

   A test should assert those lines. In the allocator-agnostic graph (any
   scope): nodes split off the arena's node by the SPLIT line, and a
   cluster node made by the MERGE line whose members include the nodes
   headed at tmp4's and tmp5's chunks (tmp4 - 16 and tmp5 - 16); rolled
   back to before the last pool_free, no cluster holds them. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA 65536
#define INUSE ((size_t)1)

struct chunk {
    size_t prev_size; /* size of the chunk below, when that one is free */
    size_t size;      /* bytes, header included; bit 0: in use */
    struct chunk *fd; /* free list, while free (overlays user data) */
    struct chunk *bk;
};

struct item {
    long val;
    struct item *next;
};

static struct chunk *head, *tail;

static struct chunk *
at(struct chunk *c, size_t off)
{
    return (struct chunk *)((char *)c + off);
}

__attribute__((noinline)) static void
unlink_chunk(struct chunk *c)
{
    c->bk->fd = c->fd;
    c->fd->bk = c->bk;
}

__attribute__((noinline)) static void
link_front(struct chunk *c)
{
    c->fd = head->fd;
    c->bk = head;
    head->fd->bk = c;
    head->fd = c;
}

__attribute__((noinline)) static void
pool_init(void)
{
    char *arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct chunk *big, *fence;

    if (arena == MAP_FAILED) {
        perror("mmap");
        _exit(1);
    }
    head = (struct chunk *)arena;
    tail = at(head, 32);
    big = at(tail, 32);
    fence = at((struct chunk *)arena, ARENA - 32);
    head->prev_size = 0;
    head->size = 32 | INUSE;
    tail->prev_size = 0;
    tail->size = 32 | INUSE;
    big->prev_size = 0;
    big->size = (size_t)((char *)fence - (char *)big);
    fence->prev_size = big->size;
    fence->size = 32 | INUSE;
    head->bk = NULL;
    tail->fd = NULL;
    head->fd = tail;
    tail->bk = head;
    link_front(big);
}

__attribute__((noinline)) static void *
pool_alloc(size_t n)
{
    size_t need = ((n + 15) & ~(size_t)15) + 16;
    struct chunk *c, *rem;

    for (c = head->fd; c != tail; c = c->fd) {
        if (c->size < need)
            continue;
        if (c->size - need >= 32) {
            rem = at(c, need);
            rem->size = c->size - need;
            rem->fd = c->fd;
            rem->bk = c->bk;
            c->bk->fd = rem; /* SPLIT */
            c->fd->bk = rem;
            at(rem, rem->size)->prev_size = rem->size;
            c->size = need;
        } else {
            unlink_chunk(c);
        }
        c->size |= INUSE;
        at(c, c->size & ~INUSE)->prev_size = 0;
        return (char *)c + 16;
    }
    return NULL;
}

__attribute__((noinline)) static void
pool_free(void *p)
{
    struct chunk *c = (struct chunk *)((char *)p - 16), *next, *prev;
    size_t size = c->size & ~INUSE;

    next = at(c, size);
    if (!(next->size & INUSE)) {
        unlink_chunk(next);
        size += next->size;
    }
    if (c->prev_size != 0) {
        prev = (struct chunk *)((char *)c - c->prev_size); /* MERGE */
        unlink_chunk(prev);
        size += prev->size;
        c = prev;
    }
    c->size = size;
    at(c, size)->prev_size = size;
    link_front(c);
}

int
main(void)
{
    struct item *tmp2, *tmp3, *tmp4, *tmp5, *tmp6;
    struct chunk *c;
    int n = 0;

    pool_init();
    tmp2 = pool_alloc(sizeof *tmp2);
    tmp3 = pool_alloc(sizeof *tmp3);
    tmp4 = pool_alloc(sizeof *tmp4);
    tmp5 = pool_alloc(sizeof *tmp5);
    tmp6 = pool_alloc(sizeof *tmp6); /* keeps tmp5 away from the free rest */
    if (tmp2 == NULL || tmp3 == NULL || tmp4 == NULL || tmp5 == NULL || tmp6 == NULL)
        return 1;
    tmp2->val = 2;
    tmp2->next = tmp3;
    tmp3->val = 3;
    tmp3->next = tmp4;
    tmp4->val = 4;
    tmp4->next = tmp5;
    tmp5->val = 5;
    tmp5->next = NULL;
    pool_free(tmp2);
    pool_free(tmp4);
    pool_free(tmp5);

    printf("arena %p\n", (void *)head);
    printf("tmp2 %p tmp3 %p tmp4 %p tmp5 %p\n", (void *)tmp2, (void *)tmp3, (void *)tmp4, (void *)tmp5);
    printf("free list:");
    for (c = head->fd; c != tail; c = c->fd)
        n++;
    printf(" %d chunks, sizes", n);
    for (c = head->fd; c != tail; c = c->fd)
        printf(" %zu", c->size);
    printf("\n");
    return 0;
}
