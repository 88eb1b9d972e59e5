// Package insn decodes one x86-64 instruction's machine code into what a
// dynamic slicer needs to know about it: the registers it reads and writes
// (explicit and implicit operands, flags included), the registers that form
// its memory operand's address, how it transfers control, and whether it is
// a candidate register save or restore.
//
// Memory addresses are not computed here: the trace records every load and
// store with its address. Registers use the trace's numbering
// (tracepb.Register): bit n of a Regs is register n.
//
// # Decoding
//
// Legacy and SSE encodings are decoded by golang.org/x/arch/x86/x86asm.
// VEX encodings (C4/C5: AVX, AVX2, FMA, BMI1/BMI2), which x86asm does not
// handle, are decoded here from the VEX fields, the opcode map and a table
// of known opcodes; an unknown VEX opcode is an error, not a guess. EVEX
// (AVX-512) and XOP are errors. The hint-nop space 0F 18-1F (endbr64,
// rdssp, which do nothing without CET, as under Valgrind), adcx/adox and
// rdpkru/wrpkru are decoded here too.
//
// # Modelling rules
//
// The guiding rule is that a missing Use only loses precision in a slice
// while a wrong Def cuts a real dependence, so anything uncertain is a Use.
//
//   - Locations: sub-registers are their 64-bit register (ah is RAX), xmm
//     and ymm n are XMMn, the x87 stack and MMX registers together are X87,
//     anything else (segment registers, mxcsr, ...) is REG_OTHER. X87 and
//     REG_OTHER are aggregates: writing them always reads them as well.
//   - Writes: a 32- or 64-bit GPR write is a Def (32 bits zero-extend); an
//     8- or 16-bit write is a Def and a Use. Read-modify-write instructions
//     (add, shl, bswap, xadd, ...) use their destination, and so do cmovcc
//     (it may keep it) and bsf/bsr (unchanged for a zero source). Legacy SSE
//     writes that keep part of the register (scalar arithmetic, movss/movsd
//     between registers, cvtsi2sd, pinsr*, movlps, ...) and packed
//     arithmetic use the destination; full-width moves, loads, movd/movq
//     into xmm, movss/movsd from memory, conversions and shuffles that
//     write the whole register do not. A VEX instruction zeroes the upper
//     part, so its destination is a Def only, except for FMA and gathers.
//   - Zero idioms (xor/sub r,r; pxor, xorps, xorpd, pandn, psub*, pcmpgt*
//     and pcmpeq* with equal operands, and their VEX forms with equal
//     sources) read nothing; sbb r,r reads only RFLAGS.
//   - Flags: RFLAGS is a Def of instructions that set all flags (add, cmp,
//     test, neg, imul, bsf, popcnt, comisd, ptest, andn, ...), a Use and a
//     Def of those that keep some (inc/dec, rotates, bt*, cmpxchg8b, shifts
//     whose count may be zero: by cl or by an immediate that masks to 0),
//     and a Use of jcc, setcc, cmovcc, adc/sbb, pushf, lahf and string
//     instructions (DF).
//   - Implicit operands: mul/div (rax, rdx; ax for byte forms), cwd/cqo and
//     cbw/cdqe, string instructions (rsi, rdi, rax, and rcx with rep),
//     cmpxchg (rax), cmpxchg8b/16b, cpuid, rdtsc(p), syscall (arguments
//     rax rdi rsi rdx r10 r8 r9; it writes rax, rcx, r11), int 0x80, stack
//     instructions (rsp), leave (reads rbp, writes rsp and rbp), pcmpXstrX,
//     blendv (xmm0), mulx (rdx), xsave/xrstor (all vector state).
//   - Memory operands: Base and Index are the address registers (RIP when
//     rip-relative); an fs/gs override adds FS_BASE/GS_BASE to Uses. For LEA
//     they are Uses instead. A nop or prefetch operand is ignored. An
//     implicit stack access (push, pop, call, ret, pushf, popf) has Base
//     RSP; push/pop/call of a memory operand report that operand. leave has
//     Base RBP. String instructions leave Base and Index 0 (rsi and rdi are
//     Uses). A gather's vector index register is a Use.
//   - Control: Target is absolute (pc + Len + displacement). loop uses and
//     writes rcx; jrcxz uses it. int3, int1, ud2, hlt and int n other than
//     0x80 are Halt.
//   - Save and Restore: push r64 saves r; mov [rsp+d] or [rbp+d], r64
//     saves r; pop r64 and mov r64, [rsp+d] or [rbp+d] restore r. leave
//     restores RBP (it is mov rsp, rbp; pop rbp).
//   - Value flow: Flow says how the destination's value relates to the
//     sources, for analyses that follow values (pointer provenance, value
//     propagation chains); it changes nothing above. FlowMove is a copy
//     (mov, movzx/movsx/movsxd, cbw/cwde/cdqe, movd/movq, movss/movsd,
//     whole-register vector moves, push and pop, movs, stos, lods, lea r,
//     [base]);
//     FlowConst a constant (mov of an immediate, push imm, the zero and
//     all-ones idioms above except those of floating-point subtraction,
//     lea of a rip-relative or absolute address, which is the address of
//     a global); FlowAdd pointer arithmetic (add, sub, inc, dec, lea with
//     a base: Dst = Src + Scale*Src2 + Imm), including sub r, r2 (Sub set)
//     since p - q needs its own treatment; FlowSwap xchg; FlowCondMove
//     cmovcc. Everything else, movbe (byte-swapped), adc/sbb, xadd,
//     cmpxchg, partial vector moves (movlps, movhps, vmovss with three
//     operands, ...) and broadcasts included, is FlowOther. Operands are
//     general-purpose or vector registers or memory: an operand in the
//     x87/MMX stack, a segment or other special register, or a high-byte
//     register (ah, bh, ch, dh: not its location's low byte) makes the
//     flow FlowOther. Width is the size of the value written (movd, movq,
//     movss and movsd give the 4 or 8 bytes they copy), and Imm is
//     sign-extended from Width bytes (-1 with Width 16 is all ones).
//   - Comparisons: Compare marks cmp, test and the legacy-encoded flag
//     compares (comiss, comisd, ucomiss, ucomisd, ptest), whose one effect
//     is RFLAGS; Cond is the condition a jcc, setcc or cmovcc tests
//     (CondE for je/sete/cmove, ...), for analyses that pair a compare with
//     the jump that reads its flags (relevant input analysis: a je taken,
//     or a jne not taken, after a compare means "equal").
//   - Anything decoded but not modelled above: explicit register operands
//     are Uses, the first operand is also a Def (and a Use), RFLAGS is a Use
//     unless the first operand is a vector register; an instruction with no
//     operands uses and writes REG_OTHER.
package insn
