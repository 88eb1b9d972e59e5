/* syscalls.c: the system calls that create and remove heap memory.

   Exercises: brk (through sbrk: grow the program break by one page, use
   the page, shrink it back), an anonymous private mmap that is written,
   grown with mremap and unmapped with munmap, and a 256 KiB malloc, which
   glibc serves with mmap (requests above its 128 KiB mmap threshold), then
   frees with munmap. The recorder must turn each into heap ranges.

   Usage: syscalls   (no arguments)

   Output (stdout), a first line, then one line per step; the addresses
   change from run to run (address space randomisation), the rest does
   not:
       syscalls
       brk 0x55e4b9c2d000 -> 0x55e4b9c2e000
       brk page 0x55e4b9c2d000 sum 4096
       brk back 0x55e4b9c2d000
       mmap 0x7f1c2d5e0000 len 65536 sum 65536
       mremap 0x7f1c2d5c0000 len 131072 sum 65536
       munmap 0x7f1c2d5c0000 len 131072
       malloc 0x7f1c2d5a1010 len 262144 sum 262144
       free 0x7f1c2d5a1010
   "brk A -> B": sbrk(0) was A, and after sbrk(4096) the break is B =
   A + 4096; "brk page A": the page at A was written and read back (sum
   of its bytes, each 1); "brk back A": after sbrk(-4096) the break is A
   again. The mmap, mremap and malloc lines give the block's address, its
   length, and the sum of bytes written to it (each 1; mremap keeps the
   first 65536 bytes and adds zeroed ones). Exit status 0.

   A test should assert the nine lines' shapes and the arithmetic (B =
   A + 4096, sums). In a trace: brk syscalls returning A + 4096 and A;
   mmap returning the mmap line's address with length 65536; mremap from
   it to the mremap line's address (the same address when the kernel, or
   Valgrind, grows the mapping in place); munmap of that; an mmap of at least
   262144 + 16 bytes that contains the malloc line's address, and its
   munmap at the free. Under Valgrind the brk segment is emulated but
   behaves the same. */
#define _GNU_SOURCE /* mremap, MREMAP_MAYMOVE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* fill sets the n bytes at p to 1. */
static void
fill(unsigned char *p, size_t n)
{
    memset(p, 1, n);
}

/* sum_bytes reads the n bytes at p one by one and returns their sum. */
static long
sum_bytes(const unsigned char *p, size_t n)
{
    size_t i;
    long sum = 0;

    for (i = 0; i < n; i++)
        sum += p[i];
    return sum;
}

int
main(void)
{
    const size_t page = 4096, maplen = 65536, biglen = 256 * 1024;
    unsigned char *brk0, *brk1, *m, *m2, *big;
    long sum;

    /* Print once first: stdout's buffer is malloc'd on first use, and that
       must not move the break between the sbrk calls below. */
    printf("syscalls\n");

    /* brk: grow by a page, use it, give it back. */
    brk0 = sbrk(0);
    if (sbrk((intptr_t)page) == (void *)-1) {
        perror("sbrk");
        return 1;
    }
    brk1 = sbrk(0);
    printf("brk %p -> %p\n", (void *)brk0, (void *)brk1);
    fill(brk0, page);
    sum = sum_bytes(brk0, page);
    printf("brk page %p sum %ld\n", (void *)brk0, sum);
    if (sbrk(-(intptr_t)page) == (void *)-1) {
        perror("sbrk");
        return 1;
    }
    printf("brk back %p\n", sbrk(0));

    /* mmap: anonymous private memory, then grow it and unmap it. */
    m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    fill(m, maplen);
    sum = sum_bytes(m, maplen);
    printf("mmap %p len %zu sum %ld\n", (void *)m, maplen, sum);

    m2 = mremap(m, maplen, 2 * maplen, MREMAP_MAYMOVE);
    if (m2 == MAP_FAILED) {
        perror("mremap");
        return 1;
    }
    sum = sum_bytes(m2, 2 * maplen); /* 65536 ones, then zeros */
    printf("mremap %p len %zu sum %ld\n", (void *)m2, 2 * maplen, sum);

    if (munmap(m2, 2 * maplen) != 0) {
        perror("munmap");
        return 1;
    }
    printf("munmap %p len %zu\n", (void *)m2, 2 * maplen);

    /* A large malloc: glibc maps it with mmap and unmaps it at free. */
    big = malloc(biglen);
    if (big == NULL) {
        perror("malloc");
        return 1;
    }
    fill(big, biglen);
    sum = sum_bytes(big, biglen);
    printf("malloc %p len %zu sum %ld\n", (void *)big, biglen, sum);
    printf("free %p\n", (void *)big); /* printed just before the free */
    free(big);
    return 0;
}
