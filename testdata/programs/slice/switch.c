/* switch.c: a value chosen by a switch that gcc compiles to a jump table.

   Exercises: control dependence through an indirect jump (jump table),
   a selector computed from argc (spilled by main's opening line) and a
   volatile, and a variable's initial value overwritten in the taken case.

   Usage: switch   (no arguments: argc = 1, so k = 1 + 2 = 3, case 3)

   Output: `r 31 other 9`; exit 0.

   Criterion r (`int r = v + 1;`): reads v, last written by `v = 30` in
   case 3 (the initial `int v = -1` is overwritten: out). `v = 30` stores
   a constant, so it has no data dependences, but it is control dependent
   on the switch's branches: the `ja` to the default (k > 7 unsigned) and
   the `jmp *%rax` through the table, both on the `switch (k)` line,
   which reads k. k = argc + bias reads argc (stored to the stack by
   main's opening line: the `{` line, where gcc puts the prologue and the
   spill of edi) and bias (`int bias = two`, which reads the volatile
   global two: no instruction of main writes it, it is initialised data).
   In: main's `{`, bias, k, switch, `v = 30`. Out: `int v = -1`,
   `other = 9` and its line, the `break;` after `v = 30` (an
   unconditional jmp: nothing depends on it), the other cases (not
   executed).
   Line attribution (gcc 12 -O0, objdump -d -l): the `switch (k)` line
   holds cmpl $7,k(%rbp); ja default; the table load (mov k,%eax; lea;
   mov (%rdx,%rax,1),%eax from .rodata, which nothing writes; cltq; add)
   and `jmp *%rax` (no `notrack`: Debian's gcc does not default to
   -fcf-protection). The `{` line holds push rbp; mov rsp,rbp; sub;
   mov %edi,argc(%rbp); mov %rsi,argv(%rbp). */
#include <stdio.h>

volatile int two = 2;

int
main(int argc, char **argv)
{                                   //@ in=r
    int bias = two;                 //@ in=r
    int other = 9;
    int v = -1;
    int k = argc + bias;            //@ in=r
    (void)argv;
    switch (k) {                    //@ in=r
    case 0:
        v = 100;
        break;
    case 1:
        v = 10;
        break;
    case 2:
        v = 20;
        break;
    case 3:
        v = 30;                     //@ in=r
        break;
    case 4:
        v = 40;
        break;
    case 5:
        v = 50;
        break;
    case 6:
        v = 60;
        break;
    case 7:
        v = 70;
        break;
    default:
        v = 0;
        break;
    }
    int r = v + 1;                  //@ crit=r
    printf("r %d other %d\n", r, other);
    return 0;
}
