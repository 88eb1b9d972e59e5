/* state/cells.c: heap cells that the program prints at its C-points, so
   that a test can compare what `analyze state` says memory held at each
   C-point with what the program itself saw (explore/state, analyze
   state).

   Exercises: a struct with fields of different sizes (a pointer, an int,
   a short, a char, a long, a char array) and padding the program never
   writes; malloc'd cells mutated by a seeded pseudo-random sequence of
   operations (add, free, change key and total, rename, relink, reweigh);
   frees followed by new allocations that reuse the freed chunks; a table
   of cell pointers that grows with realloc; MGTRACE_CPOINT("cells") every
   STEP operations.

   Usage: cells [OPS [SEED [STEP]]]   (defaults 400 1 5)

   Output (stdout): first `cells seed S ops N` (before any cell exists, so
   that stdio's buffer is allocated first), then for each C-point K (from
   1) the line
       checkpoint K cells M
   and one line per live cell, in table order:
       cell ADDR fresh F next ADDR key K weight W tag T total T name HEX hi H
   ADDR and next in hex (0 for NULL); key, weight, tag and total in
   decimal as the C types hold them (int, short, signed char, long); name
   the hex of its first H bytes, H being the most bytes the program has
   written into the array since the cell was allocated (the name and its
   NUL); the program never reads the bytes after them. fresh is 1 when no
   block the program got from the allocator before (cells and the table)
   overlapped the cell's bytes: the bytes of a fresh cell that the program
   did not write (name[H..12) and the 4 bytes of padding at the end) were
   never written by anyone. Last line: `done checkpoints C`. Exit 0.

   A test should assert: at cpoint:K, every printed field equals the
   state's value of the node at ADDR, and for fresh cells name[H..12)
   and bytes 36..39 are unknown. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

struct cell {
    struct cell *next; /* 0 */
    int key;           /* 8 */
    short weight;      /* 12 */
    signed char tag;   /* 14, then one byte of padding */
    long total;        /* 16 */
    char name[12];     /* 24, then four bytes of padding: 40 bytes */
};

#define MAXCELLS 48
#define MAXUSED 8192

/* What the program knows of each cell, kept outside the heap. */
static struct {
    int hi;    /* bytes of name written since the allocation */
    int fresh; /* no earlier block overlapped it */
} meta[MAXCELLS];

static struct cell **table;
static int ncells, cap;
static uintptr_t used_lo[MAXUSED], used_hi[MAXUSED];
static int nused;
static uint64_t rng;

static uint64_t next_rand(void) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng >> 17;
}

/* note_block records a block the allocator handed out and says whether
   it was fresh: no earlier block overlapped it. */
static int note_block(void *p) {
    uintptr_t lo = (uintptr_t)p, hi = lo + malloc_usable_size(p);
    int fresh = 1;
    for (int i = 0; i < nused; i++)
        if (lo < used_hi[i] && used_lo[i] < hi)
            fresh = 0;
    if (nused < MAXUSED) {
        used_lo[nused] = lo;
        used_hi[nused] = hi;
        nused++;
    } else {
        fresh = 0;
    }
    return fresh;
}

/* set_name writes a random name of 1..11 letters and its NUL, one char
   at a time. */
static void set_name(int i) {
    struct cell *c = table[i];
    int n = 1 + (int)(next_rand() % 11);
    for (int k = 0; k < n; k++)
        c->name[k] = (char)('a' + next_rand() % 26);
    c->name[n] = 0;
    if (n + 1 > meta[i].hi)
        meta[i].hi = n + 1;
}

static struct cell *pick(void) {
    if (ncells == 0 || next_rand() % 4 == 0)
        return NULL;
    return table[next_rand() % (uint64_t)ncells];
}

static void add_cell(void) {
    if (ncells == cap) {
        cap = cap ? 2 * cap : 2;
        table = realloc(table, (size_t)cap * sizeof *table);
        if (!table)
            exit(1);
        note_block(table);
    }
    struct cell *c = malloc(sizeof *c); /* ALLOC */
    if (!c)
        exit(1);
    int i = ncells++;
    table[i] = c;
    meta[i].fresh = note_block(c);
    meta[i].hi = 0;
    c->next = pick();
    c->key = (int)next_rand();
    c->weight = (short)next_rand();
    c->tag = (signed char)next_rand();
    c->total = (long)(next_rand() * 2654435761ULL);
    set_name(i);
}

static void free_cell(int i) {
    struct cell *dead = table[i];
    for (int j = 0; j < ncells; j++)
        if (j != i && table[j]->next == dead)
            table[j]->next = NULL;
    free(dead);
    ncells--;
    table[i] = table[ncells];
    meta[i] = meta[ncells];
}

/* The output is formatted by hand into one buffer and written with one
   fwrite per C-point: printf would make the trace ten times longer. */
static char out[1 << 16];
static size_t outn;

static void put_str(const char *s) {
    while (*s && outn < sizeof out - 1)
        out[outn++] = *s++;
}

static void put_hex(uint64_t v, int digits) {
    char tmp[17];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v || n < digits);
    while (n > 0 && outn < sizeof out - 1)
        out[outn++] = tmp[--n];
}

static void put_dec(long v) {
    char tmp[21];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        put_str("-");
    while (n > 0 && outn < sizeof out - 1)
        out[outn++] = tmp[--n];
}

static void print_cells(int k) {
    outn = 0;
    put_str("checkpoint ");
    put_dec(k);
    put_str(" cells ");
    put_dec(ncells);
    put_str("\n");
    for (int i = 0; i < ncells; i++) {
        struct cell *c = table[i];
        put_str("cell ");
        put_hex((uintptr_t)c, 1);
        put_str(" fresh ");
        put_dec(meta[i].fresh);
        put_str(" next ");
        put_hex((uintptr_t)c->next, 1);
        put_str(" key ");
        put_dec(c->key);
        put_str(" weight ");
        put_dec(c->weight);
        put_str(" tag ");
        put_dec(c->tag);
        put_str(" total ");
        put_dec(c->total);
        put_str(" name ");
        for (int b = 0; b < meta[i].hi; b++)
            put_hex((unsigned char)c->name[b], 2);
        put_str(" hi ");
        put_dec(meta[i].hi);
        put_str("\n");
    }
    fwrite(out, 1, outn, stdout);
}

int main(int argc, char **argv) {
    int ops = argc > 1 ? atoi(argv[1]) : 400;
    int seed = argc > 2 ? atoi(argv[2]) : 1;
    int step = argc > 3 ? atoi(argv[3]) : 5;
    if (ops < 0 || step < 1)
        return 2;
    rng = (uint64_t)seed;
    printf("cells seed %d ops %d\n", seed, ops);
    int checkpoints = 0;
    for (int op = 0; op < ops; op++) {
        int what = (int)(next_rand() % 8);
        if (ncells < 3 && what > 1)
            what = 0;
        if (what <= 1 && ncells >= MAXCELLS)
            what = 2;
        struct cell *c = ncells ? table[next_rand() % (uint64_t)ncells] : NULL;
        switch (what) {
        case 0:
        case 1:
            add_cell();
            break;
        case 2:
            free_cell((int)(next_rand() % (uint64_t)ncells));
            break;
        case 3:
            c->key += (int)next_rand();
            c->total ^= (long)next_rand();
            break;
        case 4:
            for (int i = 0; i < ncells; i++)
                if (table[i] == c)
                    set_name(i);
            break;
        case 5:
            c->next = pick();
            break;
        default:
            c->weight = (short)(c->weight + 7);
            c->tag = (signed char)(c->tag ^ 0x55);
            break;
        }
        if ((op + 1) % step == 0) {
            checkpoints++;
            MGTRACE_CPOINT("cells");
            print_cells(checkpoints);
        }
    }
    printf("done checkpoints %d\n", checkpoints);
    return 0;
}
