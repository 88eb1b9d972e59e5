/* wide.c: 16- and 32-byte loads and stores.

   Exercises: accesses wider than 8 bytes, whose values span several
   words: a 16-byte SSE2 load and store (movdqu), a 32-byte struct
   assignment (which gcc and clang compile to two 16-byte moves at -O1 and
   above), and, when the CPU has AVX, a 32-byte AVX load and store
   (vmovdqu with a ymm register). All of them copy between two heap blocks.

   No special build flags: SSE2 is part of x86-64, and the AVX function is
   compiled for AVX by its target attribute and only called when
   __builtin_cpu_supports("avx") says the CPU (or Valgrind's simulated CPU)
   has it.

   Usage: wide   (no arguments)

   Output (stdout); the addresses change from run to run, the rest does
   not:
       src 0x55d0c3e0a2c0 dst 0x55d0c3e0a300
       sse16 dst+0 1111111111111111 2222222222222222
       struct32 dst+32 1111111111111111 2222222222222222 3333333333333333 4444444444444444
       avx32 dst+64 1111111111111111 2222222222222222 3333333333333333 4444444444444444
   The words are what was read back from dst after each copy. Without AVX
   the last line is "avx32 skipped". Exit status 0.

   A test should assert these lines. In a trace: a 16-byte load from src
   and a 16-byte store to dst whose value words are 0x1111111111111111,
   0x2222222222222222 (in copy16); 16-byte loads and stores covering
   dst+32..dst+63 (in copy32); and, when the avx32 line is not "skipped", a
   32-byte load from src and a 32-byte store to dst+64 with the four words
   (in copy32_avx). */
#include <immintrin.h> /* SSE2 and AVX intrinsics */
#include <stdio.h>
#include <stdlib.h>

/* Four 8-byte words, 32-byte aligned: copied as one struct. */
struct block {
    unsigned long w[4];
} __attribute__((aligned(32)));

/* copy16 copies 16 bytes with one SSE2 load and one SSE2 store. */
__attribute__((noinline)) static void
copy16(void *dst, const void *src)
{
    __m128i v = _mm_loadu_si128((const __m128i *)src);

    _mm_storeu_si128((__m128i *)dst, v);
}

/* copy32 copies a 32-byte struct by assignment; the compiler picks the
   instructions (two 16-byte moves at -O1 on x86-64). */
__attribute__((noinline)) static void
copy32(struct block *dst, const struct block *src)
{
    *dst = *src;
}

/* copy32_avx copies 32 bytes with one AVX load and one AVX store. Only
   call it when the CPU has AVX. */
__attribute__((noinline, target("avx"))) static void
copy32_avx(void *dst, const void *src)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)src);

    _mm256_storeu_si256((__m256i *)dst, v);
}

/* print_words prints n words starting at p, after a label. */
static void
print_words(const char *label, const unsigned long *p, int n)
{
    int i;

    printf("%s", label);
    for (i = 0; i < n; i++)
        printf(" %016lx", p[i]);
    printf("\n");
}

int
main(void)
{
    struct block *src, *dst;
    void *mem;
    int i;

    /* src: one block; dst: three blocks, one per copy. */
    if (posix_memalign(&mem, 32, sizeof *src) != 0) {
        perror("posix_memalign");
        return 1;
    }
    src = mem;
    if (posix_memalign(&mem, 32, 3 * sizeof *dst) != 0) {
        perror("posix_memalign");
        return 1;
    }
    dst = mem;
    for (i = 0; i < 4; i++)
        src->w[i] = 0x1111111111111111UL * (unsigned long)(i + 1);
    for (i = 0; i < 12; i++)
        dst[i / 4].w[i % 4] = 0;
    printf("src %p dst %p\n", (void *)src, (void *)dst);

    copy16(&dst[0], src);
    print_words("sse16 dst+0", dst[0].w, 2);

    copy32(&dst[1], src);
    print_words("struct32 dst+32", dst[1].w, 4);

    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx")) {
        copy32_avx(&dst[2], src);
        print_words("avx32 dst+64", dst[2].w, 4);
    } else {
        printf("avx32 skipped\n");
    }

    free(src);
    free(dst);
    return 0;
}
