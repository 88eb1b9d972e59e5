/* harness.c: drives GCC's libiberty splay tree (splay-tree.c, from Debian's
   libiberty source package) with integer keys, as GCC's passes use it: a
   deterministic mix of inserts, lookups and removes. Every value is a
   malloc'd record, and a lookup of a key the harness knows it inserted
   uses the record at once, the way GCC's callers trust the tree: when the
   tree has lost a node, the lookup returns NULL and the run dies of
   SIGSEGV, the crash Vineet Singh's dissertation reports for 403.gcc's
   splay tree (table 4.3).

   Build (testdata/real/get.sh splay):
     gcc -g -O2 -I LIBIBERTY/include harness.c LIBIBERTY/libiberty/splay-tree.c
   Usage: harness [N]   N keys (default 2000, at most 100000).
   Prints one line: "splay: N keys, K present, checksum C". */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "splay-tree.h"

/* The allocation functions of libiberty that splay-tree.c calls
   (XNEWVEC and friends); libiberty's own xmalloc.c needs its whole
   configuration. */
void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (!p)
    abort ();
  return p;
}

void *
xrealloc (void *old, size_t n)
{
  void *p = realloc (old, n ? n : 1);
  if (!p)
    abort ();
  return p;
}

void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size ? size : 1);
  if (!p)
    abort ();
  return p;
}

/* A record the tree maps a key to (16 bytes: no node of the tree, whose
   struct splay_tree_node_s is 32). */
struct rec
{
  long key;
  long weight;
};

static void
free_rec (splay_tree_value v)
{
  free ((struct rec *) v);
}

static uint64_t rng = 88172645463325252ull;

/* xorshift64: the same sequence on every run. */
static uint64_t
next_rand (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

int
main (int argc, char **argv)
{
  long n = argc > 1 ? atol (argv[1]) : 2000;
  if (n < 1 || n > 100000)
    {
      fprintf (stderr, "usage: harness [N], N from 1 to 100000\n");
      return 2;
    }
  char *present = calloc (n, 1);
  splay_tree sp = splay_tree_new (splay_tree_compare_ints, NULL, free_rec);
  unsigned long sum = 0;
  long live = 0;

  for (long i = 0; i < 4 * n; i++)
    {
      long k = (long) (next_rand () % (uint64_t) n);
      uint64_t op = next_rand () % 8;
      if (op < 4)
        {
          /* Insert (or replace) k. */
          struct rec *r = xmalloc (sizeof *r);
          r->key = k;
          r->weight = (long) (next_rand () % 1000);
          splay_tree_insert (sp, (splay_tree_key) k, (splay_tree_value) r);
          live += !present[k];
          present[k] = 1;
        }
      else if (op < 7)
        {
          /* Look k up; a key known to be there is used without a test. */
          splay_tree_node nd = splay_tree_lookup (sp, (splay_tree_key) k);
          if (present[k])
            sum = sum * 31 + (unsigned long) ((struct rec *) nd->value)->weight;
          else if (nd)
            {
              fprintf (stderr, "splay: key %ld found but never inserted\n", k);
              return 1;
            }
        }
      else
        {
          /* Remove k. */
          splay_tree_remove (sp, (splay_tree_key) k);
          live -= present[k];
          present[k] = 0;
        }
    }
  printf ("splay: %ld keys, %ld present, checksum %08lx\n", n, live,
          sum & 0xffffffffUL);
  /* The tree is left allocated: the end of the run is a C-point. */
  return 0;
}
