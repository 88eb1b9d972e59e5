/* loop.c: a loop filling an array, a loop summing it, an unrelated loop.

   Exercises: control dependence on a loop condition (the `for` header
   line holds i's init, the condition and the increment at -O0), index
   registers as dependences (arr[i] depends on i), memory dependences on
   array elements, and a loop that does not reach the criterion.

   Output: `s 336 u 64`; exit 0.

   Criteria:
   s  (`int s = sum * 2;`, after the loops): reads sum, last written by
      `sum += arr[i]` in the last iteration of the summing loop. That
      line reads sum (its previous iteration, and first `sum = 0`), i
      (index register: the summing loop's header, whose increment reads
      i, back to its init) and arr[i] (each element written by
      `arr[i] = i * 3`, whose value and index come from the filling
      loop's header). The body instances are control dependent on the
      header's condition instances, which read n (`int n = 8`). So in: n,
      both loop headers and bodies, sum = 0. Out: unrelated's lines and
      its loop (`for (j ...)` and its body), u's line, main's `{`.
   u  (`int u = unrelated + 1;`): unrelated is last written by the body
      of the j loop; that body reads unrelated (back to `unrelated = 1`),
      and is control dependent on the j loop's condition (header line).
      In: `int unrelated = 1`, the j header, its body. Out: everything
      about arr, n and sum.
   Line attribution (gcc 12 -O0): each `for` header line holds the init
   (store 0 to i), the condition (load i, compare, conditional jump) and
   the increment (add 1 to i in memory); the body line holds the rest. */
#include <stdio.h>

int
main(void)
{
    int arr[8];
    int n = 8;                          //@ in=s
    for (int i = 0; i < n; i++)         //@ in=s
        arr[i] = i * 6;                 //@ in=s
    int sum = 0;                        //@ in=s
    int unrelated = 1;                  //@ in=u
    for (int j = 0; j < 5; j++)         //@ in=u
        unrelated = unrelated * 2 + 1;  //@ in=u
    for (int i = 0; i < n; i++)         //@ in=s
        sum += arr[i];                  //@ in=s
    int s = sum * 2;                    //@ crit=s
    int u = unrelated + 1;              //@ crit=u
    printf("s %d u %d\n", s, u);
    return 0;
}
