/* bound.c: a loop with a wrong bound (`i <= 10` on line 17, for an array
   of 10) overwrites the pointer stored after the array with 0, and the
   program then writes through it: SIGSEGV. Switching the bound check's
   11th instance (i == 10, the last that enters the loop) ends the loop in
   time and the run ends normally. */
#include <stdio.h>

struct frame {
   long a[10];
   long* p;
};

static struct frame f;

int main(void) {
   f.p = &f.a[0];
   for (int i = 0; i <= 10; i++) {
      f.a[i] = 0;
   }
   *f.p = 42;
   printf("%ld\n", f.a[0]);
   return 0;
}
