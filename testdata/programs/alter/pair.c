/* pair.c: one source line with two stores (line 14). Suppressing its 2nd
   execution skips both stores of that execution (the line's anchor, its
   lowest-address store, and the store after it in the same straight-line
   code): prints "1 10 0 0 3 12". Unchanged: "1 10 2 11 3 12". */
#include <stdio.h>

struct pair {
   long a, b;
};

static struct pair ps[3];

static void fill(int i) {
   ps[i].a = i + 1, ps[i].b = i + 10;
}

int main(void) {
   for (int i = 0; i < 3; i++) {
      fill(i);
   }
   printf("%ld %ld %ld %ld %ld %ld\n", ps[0].a, ps[0].b, ps[1].a, ps[1].b, ps[2].a, ps[2].b);
   return 0;
}
