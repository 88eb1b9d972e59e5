// flags: -g -O2 -fno-omit-frame-pointer -pthread
/* saverestore.c: a callee-saved register saved and restored by a callee.
   Built with the flags above (not the slice tests' default -O0).

   The DrDebug save/restore case. x, computed from the volatile in1, lives
   in rbx across a call of g() that is guarded by a condition computed
   from the other volatile, in2. g saves and restores rbx (the asm
   clobber forces push %rbx / pop %rbx); `noipa` keeps gcc from using
   g's real register usage (IPA-RA), which would otherwise let x stay in
   a caller-saved register that g happens not to touch.

   Output: `out 114 sink 1`; exit 0.

   Compiled code (gcc 12 -O2, objdump -d -l), by line:
     main `{`      push rbp; mov rsp,rbp; push rbx; sub $8,rsp
     x line        mov in1(%rip),%eax; lea 0(,%rax,8),%ebx; sub %eax,%ebx;
                   add $3,%ebx      (interleaved with the c line's load)
     c line        mov in2(%rip),%eax
     if line       cmp $1,%eax; je <call>      (c == 0 is in2 == 1)
     out line      lea (%rbx,%rbx,2),%eax; mov %eax,out(%rip)
     g(); line     call g; jmp back to the out line   (moved out of line)
     g `{`         push rbp; mov rsp,rbp; push r15,r14,r13,r12,rbx
     g `}`         pop rbx,r12,r13,r14,r15,rbp; ret
     g's sink line mov sink,%eax; add $1; mov %eax,sink
   So x is in rbx across the call, g pushes rbx on its `{` line and pops
   it on its `}` line.

   Criterion x (no pruning), the out line: lea reads rbx, last written by
   g's `pop %rbx` (`}`), which loads the bytes g's `push %rbx` (`{`)
   stored, which read rbx from the x line. g's instructions inherit the
   control dependence of the call: the `je` on the if line, which reads
   eax loaded on the c line. In: x line, c line, if line, g's `{` and
   `}`, the out line. Out: the `g();` line (the call instruction writes
   only rsp and the return address; the callee depends on what the call
   depends on, not on the call), g's sink line, main's `{`, the printf.
   Criterion xp (the same line, with --prune-save-restore): the push/pop
   of rbx in g is a save/restore pair, so the read of rbx goes straight
   to the value before the push: the x line. In: x line and the out line
   only; the if, c and g's lines are out. */
#include <stdio.h>

volatile int in1 = 5;
volatile int in2 = 1;
volatile int sink;
volatile int out;

__attribute__((noipa)) static void
g(void)
{                                   //@ in=x
    __asm__ volatile("" ::: "rbx", "r12", "r13", "r14", "r15");
    sink = sink + 1;
}                                   //@ in=x

int
main(void)
{
    int x = in1 * 7 + 3;            //@ in=x,xp
    int c = in2 - 1;                //@ in=x
    if (c == 0)                     //@ in=x
        g();
    out = x * 3;                    //@ crit=x crit=xp
    printf("out %d sink %d\n", out, sink);
    return 0;
}
