/* straight.c: straight-line integer arithmetic in main, no branches.

   Exercises: register and stack-memory data dependences at -O0, the
   last-writer rule (a variable written twice: only the later write
   counts), and statements that do not reach the criterion.

   Output: `r 21 q 14 junk 404`; exit 0.

   Criteria (each on the line whose marker names it):
   r  (`int r = f - b;`): r reads f and b. f = d + a reads d and the
      SECOND write of a (a = 5; the first write a = 3 was read only by
      the first, dead write of d, so neither `int a = 3` nor the dead
      `d = a * 2` is in). d = a * b reads a (second write) and b. So in:
      b = 4, a = 5, d = a * b, f = d + a. Out: the junk lines (never
      read by r), `int a = 3`, the dead `d = a * 2`, q's line.
      main's opening line is out: its prologue only sets rsp/rbp, and
      rbp-based accesses to locals do not depend on rbp.
   q  (`int q = b + e2 + 3;`): reads b and e2; e2 = e - 1 reads e;
      e = b * 2 reads b. In: b = 4, e = b * 2, e2 = e - 1.
   Line attribution (gcc 12 -O0, checked with objdump -d -l): main's
   prologue (push rbp; mov rsp,rbp; sub rsp) is on the `{` line; each
   statement's loads, arithmetic and store are on its own line. */
#include <stdio.h>

int
main(void)
{
    int a = 3;
    int b = 4;            //@ in=r,q
    int junk = 100;
    int d = a * 2;        /* dead: d is written again before any read */
    a = 5;                //@ in=r
    junk = junk * 4;
    d = a * b;            //@ in=r
    int e = b * 2;        //@ in=q
    int f = d + a;        //@ in=r
    junk = junk + d;
    int e2 = e - 1;       //@ in=q
    int r = f - b;        //@ crit=r
    int q = b + e2 + 3;   //@ crit=q
    junk = junk - 16;
    printf("r %d q %d junk %d\n", r, q, junk);
    return 0;
}
