/* crash.c: a load through a wild pointer computed over a few statements.

   Exercises: the criterion `crash` (the faulting instruction), an
   address computed through a helper function (parameter spill on its
   opening line, `return expr;` into eax, the caller's store of eax), and
   statements that do not reach the bad address.

   Output: `about to read 0x1018` (flushed), then the process is killed
   by SIGSEGV (shell status 139) at the load on the line marked
   `crit=bad crash`, fault address 0x1018.

   Criterion bad (the test uses `crash`): the faulting instruction is the
   load `mov (%rax),%eax` of `*p`; it reads rax, loaded from p on the same
   line. p = (int *)addr reads addr; addr = base + off reads base
   (`base = 0x1000`) and off (`off = scale(k)`, which stores eax returned
   by scale). scale's `return x * 8;` reads x, spilled from edi by
   scale's `{` line; edi was set from k on the caller's line, and k is
   `k = 3`. In: base, k, off = scale(k), scale's `{` and return lines,
   addr, p, and the crash line. Out: the junk lines, the printf and
   fflush lines (libc calls that compute nothing the load reads), main's
   `{` (rsp/rbp only).
   Line attribution (gcc 12 -O0, objdump -d -l): scale's prologue and the
   spill mov %rdi,x(%rbp) are on its `{` line; `return x * 8;` is
   mov x,%rax; shl $3,%rax; scale's pop/ret is on its `}` line (reads no
   value the load needs). */
#include <stdio.h>

__attribute__((noinline)) static long
scale(long x)
{                                   //@ in=bad
    return x * 8;                   //@ in=bad
}

int
main(void)
{
    long base = 0x1000;             //@ in=bad
    long junk = 77;
    long k = 3;                     //@ in=bad
    junk = junk * k;
    long off = scale(k);            //@ in=bad
    long addr = base + off;         //@ in=bad
    junk += addr;
    int *p = (int *)addr;           //@ in=bad
    printf("about to read %p\n", (void *)p);
    fflush(stdout);
    int v = *p;                     //@ crit=bad crash
    printf("v %d junk %ld\n", v, junk);
    return 0;
}
