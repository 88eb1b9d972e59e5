package insn

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// decodeCases are real encodings, assembled with GNU as (Intel syntax) and
// read back with objdump: the instruction, its bytes, the expected Uses
// and Defs, and other expected fields (base=, index=, class=, target=,
// save=, restore=; absent means zero). Each is decoded at pc 0x1000.
var decodeCases = []struct {
	asm, hex, uses, defs, more string
}{
	{"mov rax,rbx", "48 89 d8", "rbx", "rax", ""},
	{"mov eax,ebx", "89 d8", "rbx", "rax", ""},
	{"mov ax,bx", "66 89 d8", "rax rbx", "rax", ""},
	{"mov al,bl", "88 d8", "rax rbx", "rax", ""},
	{"mov ah,0x1", "b4 01", "rax", "rax", ""},
	{"mov rax,QWORD PTR [rsp+0x8]", "48 8b 44 24 08", "", "rax", "base=rsp restore=rax"},
	{"mov QWORD PTR [rsp+0x10],rbx", "48 89 5c 24 10", "rbx", "", "base=rsp save=rbx"},
	{"mov QWORD PTR [rbp-0x8],r12", "4c 89 65 f8", "r12", "", "base=rbp save=r12"},
	{"mov r13,QWORD PTR [rbp-0x10]", "4c 8b 6d f0", "", "r13", "base=rbp restore=r13"},
	{"mov eax,DWORD PTR [rsp+0x8]", "8b 44 24 08", "", "rax", "base=rsp"},
	{"mov QWORD PTR [rsp+0x8],0x0", "48 c7 44 24 08 00 00 00 00", "", "", "base=rsp"},
	{"mov rax,QWORD PTR fs:0x28", "64 48 8b 04 25 28 00 00 00", "fs", "rax", ""},
	{"mov rax,QWORD PTR [rip+0x100]", "48 8b 05 00 01 00 00", "", "rax", "base=rip"},
	{"mov rdx,QWORD PTR [rax+rcx*8+0x4]", "48 8b 54 c8 04", "", "rdx", "base=rax index=rcx"},
	{"movzx eax,BYTE PTR [rdi]", "0f b6 07", "", "rax", "base=rdi"},
	{"movzx ax,bl", "66 0f b6 c3", "rax rbx", "rax", ""},
	{"movsx rax,cl", "48 0f be c1", "rcx", "rax", ""},
	{"movsxd rax,DWORD PTR [rsi]", "48 63 06", "", "rax", "base=rsi"},
	{"lea rax,[rbx+rcx*2+0x8]", "48 8d 44 4b 08", "rbx rcx", "rax", ""},
	{"lea rax,[rip+0x10]", "48 8d 05 10 00 00 00", "rip", "rax", ""},
	{"add rax,rbx", "48 01 d8", "rax rbx", "rax flags", ""},
	{"add DWORD PTR [rdi],0x1", "83 07 01", "", "flags", "base=rdi"},
	{"sub rax,0x8", "48 83 e8 08", "rax", "rax flags", ""},
	{"and eax,ecx", "21 c8", "rax rcx", "rax flags", ""},
	{"or al,0x1", "0c 01", "rax", "rax flags", ""},
	{"xor ecx,ecx", "31 c9", "", "rcx flags", ""},
	{"xor rax,rax", "48 31 c0", "", "rax flags", ""},
	{"sub edx,edx", "29 d2", "", "rdx flags", ""},
	{"xor al,al", "30 c0", "rax", "rax flags", ""},
	{"sbb eax,eax", "19 c0", "flags", "rax flags", ""},
	{"adc rax,rdx", "48 11 d0", "rax rdx flags", "rax flags", ""},
	{"cmp rax,rbx", "48 39 d8", "rax rbx", "flags", ""},
	{"test eax,eax", "85 c0", "rax", "flags", ""},
	{"inc rcx", "48 ff c1", "rcx flags", "rcx flags", ""},
	{"dec DWORD PTR [rax]", "ff 08", "flags", "flags", "base=rax"},
	{"neg rax", "48 f7 d8", "rax", "rax flags", ""},
	{"not rbx", "48 f7 d3", "rbx", "rbx", ""},
	{"shl rax,0x3", "48 c1 e0 03", "rax", "rax flags", ""},
	{"shr rax,cl", "48 d3 e8", "rax rcx flags", "rax flags", ""},
	{"sar eax,1", "d1 f8", "rax", "rax flags", ""},
	{"rol rax,0x5", "48 c1 c0 05", "rax flags", "rax flags", ""},
	{"rcl rax,1", "48 d1 d0", "rax flags", "rax flags", ""},
	{"shld rax,rdx,0x4", "48 0f a4 d0 04", "rax rdx", "rax flags", ""},
	{"bt rax,rcx", "48 0f a3 c8", "rax rcx flags", "flags", ""},
	{"bts rax,0x3", "48 0f ba e8 03", "rax flags", "rax flags", ""},
	{"bsf rax,rcx", "48 0f bc c1", "rax rcx", "rax flags", ""},
	{"tzcnt rax,rdi", "f3 48 0f bc c7", "rdi", "rax flags", ""},
	{"lzcnt eax,edx", "f3 0f bd c2", "rdx", "rax flags", ""},
	{"popcnt rcx,rdx", "f3 48 0f b8 ca", "rdx", "rcx flags", ""},
	{"imul rax,rcx", "48 0f af c1", "rax rcx", "rax flags", ""},
	{"imul eax,ecx,0xc", "6b c1 0c", "rcx", "rax flags", ""},
	{"imul rcx", "48 f7 e9", "rax rcx", "rax rdx flags", ""},
	{"mul rcx", "48 f7 e1", "rax rcx", "rax rdx flags", ""},
	{"mul cl", "f6 e1", "rax rcx", "rax flags", ""},
	{"div rcx", "48 f7 f1", "rax rdx rcx", "rax rdx flags", ""},
	{"idiv ecx", "f7 f9", "rax rdx rcx", "rax rdx flags", ""},
	{"div cl", "f6 f1", "rax rcx", "rax flags", ""},
	{"cqo", "48 99", "rax", "rdx", ""},
	{"cdq", "99", "rax", "rdx", ""},
	{"cwd", "66 99", "rax rdx", "rdx", ""},
	{"cdqe", "48 98", "rax", "rax", ""},
	{"cbw", "66 98", "rax", "rax", ""},
	{"sete al", "0f 94 c0", "rax flags", "rax", ""},
	{"setne r8b", "41 0f 95 c0", "r8 flags", "r8", ""},
	{"cmove rax,rbx", "48 0f 44 c3", "rax rbx flags", "rax", ""},
	{"cmovne eax,ecx", "0f 45 c1", "rax rcx flags", "rax", ""},
	{"bswap eax", "0f c8", "rax", "rax", ""},
	{"xchg rbx,rax", "48 93", "rax rbx", "rax rbx", ""},
	{"xchg DWORD PTR [rdi],eax", "87 07", "rax", "rax", "base=rdi"},
	{"lock xadd DWORD PTR [rdi],eax", "f0 0f c1 07", "rax", "rax flags", "base=rdi"},
	{"lock cmpxchg QWORD PTR [rdi],rcx", "f0 48 0f b1 0f", "rax rcx", "rax flags", "base=rdi"},
	{"cmpxchg16b OWORD PTR [rdi]", "48 0f c7 0f", "rax rdx rbx rcx flags", "rax rdx flags", "base=rdi"},
	{"cpuid", "0f a2", "rax rcx", "rax rbx rcx rdx", ""},
	{"rdtsc", "0f 31", "", "rax rdx", ""},
	{"rdtscp", "0f 01 f9", "", "rax rdx rcx", ""},
	{"syscall", "0f 05", "rax rdi rsi rdx r10 r8 r9 flags", "rax rcx r11", "class=syscall"},
	{"int 0x80", "cd 80", "rax rbx rcx rdx rsi rdi rbp", "rax", "class=syscall"},
	{"int3", "cc", "", "", "class=halt"},
	{"ud2", "0f 0b", "", "", "class=halt"},
	{"hlt", "f4", "", "", "class=halt"},
	{"push rbx", "53", "rbx rsp", "rsp", "base=rsp save=rbx"},
	{"push r15", "41 57", "r15 rsp", "rsp", "base=rsp save=r15"},
	{"push QWORD PTR [rax+0x8]", "ff 70 08", "rsp", "rsp", "base=rax"},
	{"push 0x1", "6a 01", "rsp", "rsp", "base=rsp"},
	{"pop rbp", "5d", "rsp", "rsp rbp", "base=rsp restore=rbp"},
	{"pop r12", "41 5c", "rsp", "rsp r12", "base=rsp restore=r12"},
	{"pushf", "9c", "rsp flags", "rsp", "base=rsp"},
	{"popf", "9d", "rsp", "rsp flags", "base=rsp"},
	{"leave", "c9", "rbp", "rsp rbp", "base=rbp restore=rbp"},
	{"ret", "c3", "rsp", "rsp", "base=rsp class=return"},
	{"ret 0x8", "c2 08 00", "rsp", "rsp", "base=rsp class=return"},
	{"call rax", "ff d0", "rax rsp", "rsp", "base=rsp class=icall"},
	{"call QWORD PTR [rip+0x20]", "ff 15 20 00 00 00", "rsp", "rsp", "base=rip class=icall"},
	{"jmp rax", "ff e0", "rax", "", "class=ijump"},
	{"notrack jmp rax", "3e ff e0", "rax", "", "class=ijump"},
	{"jmp QWORD PTR [rax+rcx*8]", "ff 24 c8", "", "", "base=rax index=rcx class=ijump"},
	{"rep movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi]", "f3 a4", "rsi rdi rcx flags", "rsi rdi rcx", ""},
	{"movs QWORD PTR es:[rdi],QWORD PTR ds:[rsi]", "48 a5", "rsi rdi flags", "rsi rdi", ""},
	{"rep stos QWORD PTR es:[rdi],rax", "f3 48 ab", "rdi rax rcx flags", "rdi rcx", ""},
	{"stos BYTE PTR es:[rdi],al", "aa", "rdi rax flags", "rdi", ""},
	{"lods al,BYTE PTR ds:[rsi]", "ac", "rsi rax flags", "rsi rax", ""},
	{"repnz scas al,BYTE PTR es:[rdi]", "f2 ae", "rdi rax rcx flags", "rdi rcx flags", ""},
	{"repz cmps BYTE PTR ds:[rsi],BYTE PTR es:[rdi]", "f3 a6", "rsi rdi rcx flags", "rsi rdi rcx flags", ""},
	{"cld", "fc", "flags", "flags", ""},
	{"lahf", "9f", "flags rax", "rax", ""},
	{"endbr64", "f3 0f 1e fa", "", "", ""},
	{"nop", "90", "", "", ""},
	{"nop WORD PTR [rax+rax*1]", "66 0f 1f 04 00", "", "", ""},
	{"nop DWORD PTR [rax]", "0f 1f 00", "", "", ""},
	{"prefetcht0 BYTE PTR [rdi]", "0f 18 0f", "", "", ""},
	{"pause", "f3 90", "", "", ""},
	{"movaps xmm0,XMMWORD PTR [rdi]", "0f 28 07", "", "xmm0", "base=rdi"},
	{"movups XMMWORD PTR [rsi],xmm1", "0f 11 0e", "xmm1", "", "base=rsi"},
	{"movdqa xmm2,xmm3", "66 0f 6f d3", "xmm3", "xmm2", ""},
	{"movdqu xmm8,XMMWORD PTR [rax]", "f3 44 0f 6f 00", "", "xmm8", "base=rax"},
	{"movq xmm0,rax", "66 48 0f 6e c0", "rax", "xmm0", ""},
	{"movq rax,xmm0", "66 48 0f 7e c0", "xmm0", "rax", ""},
	{"movd xmm1,eax", "66 0f 6e c8", "rax", "xmm1", ""},
	{"movd eax,xmm1", "66 0f 7e c8", "xmm1", "rax", ""},
	{"movq xmm0,xmm1", "f3 0f 7e c1", "xmm1", "xmm0", ""},
	{"movss xmm0,DWORD PTR [rdi]", "f3 0f 10 07", "", "xmm0", "base=rdi"},
	{"movsd xmm0,xmm1", "f2 0f 10 c1", "xmm0 xmm1", "xmm0", ""},
	{"movsd QWORD PTR [rdi],xmm0", "f2 0f 11 07", "xmm0", "", "base=rdi"},
	{"addsd xmm0,xmm1", "f2 0f 58 c1", "xmm0 xmm1", "xmm0", ""},
	{"addps xmm0,xmm1", "0f 58 c1", "xmm0 xmm1", "xmm0", ""},
	{"mulss xmm2,DWORD PTR [rax]", "f3 0f 59 10", "xmm2", "xmm2", "base=rax"},
	{"pxor xmm0,xmm0", "66 0f ef c0", "", "xmm0", ""},
	{"xorps xmm1,xmm1", "0f 57 c9", "", "xmm1", ""},
	{"pxor xmm0,xmm1", "66 0f ef c1", "xmm0 xmm1", "xmm0", ""},
	{"pcmpeqb xmm0,XMMWORD PTR [rdi]", "66 0f 74 07", "xmm0", "xmm0", "base=rdi"},
	{"pmovmskb eax,xmm0", "66 0f d7 c0", "xmm0", "rax", ""},
	{"pminub xmm1,xmm2", "66 0f da ca", "xmm1 xmm2", "xmm1", ""},
	{"ptest xmm0,xmm1", "66 0f 38 17 c1", "xmm0 xmm1", "flags", ""},
	{"ucomisd xmm0,xmm1", "66 0f 2e c1", "xmm0 xmm1", "flags", ""},
	{"cvtsi2sd xmm0,rax", "f2 48 0f 2a c0", "xmm0 rax", "xmm0", ""},
	{"cvttsd2si eax,xmm0", "f2 0f 2c c0", "xmm0", "rax", ""},
	{"cvtss2sd xmm1,xmm2", "f3 0f 5a ca", "xmm1 xmm2", "xmm1", ""},
	{"pshufd xmm0,xmm1,0x0", "66 0f 70 c1 00", "xmm1", "xmm0", ""},
	{"punpcklbw xmm0,xmm1", "66 0f 60 c1", "xmm0 xmm1", "xmm0", ""},
	{"fld QWORD PTR [rdi]", "dd 07", "x87", "x87", "base=rdi"},
	{"fstp QWORD PTR [rsi]", "dd 1e", "x87", "x87", "base=rsi"},
	{"faddp st(1),st", "de c1", "x87", "x87", ""},
	{"fnstsw ax", "df e0", "x87 rax", "x87 rax", ""},
	{"fucomip st,st(1)", "df e9", "x87", "x87 flags", ""},
	{"vmovdqu ymm0,YMMWORD PTR [rdi]", "c5 fe 6f 07", "", "xmm0", "base=rdi"},
	{"vmovdqu YMMWORD PTR [rdi+0x20],ymm1", "c5 fe 7f 4f 20", "xmm1", "", "base=rdi"},
	{"vmovdqu ymm9,YMMWORD PTR [r8+rcx*1+0x20]", "c4 41 7e 6f 4c 08 20", "", "xmm9", "base=r8 index=rcx"},
	{"vmovdqa ymm2,ymm3", "c5 fd 6f d3", "xmm3", "xmm2", ""},
	{"vpcmpeqb ymm1,ymm0,YMMWORD PTR [rdi]", "c5 fd 74 0f", "xmm0", "xmm1", "base=rdi"},
	{"vpcmpeqb ymm2,ymm2,ymm2", "c5 ed 74 d2", "", "xmm2", ""},
	{"vpmovmskb eax,ymm1", "c5 fd d7 c1", "xmm1", "rax", ""},
	{"vpminub ymm3,ymm1,ymm2", "c5 f5 da da", "xmm1 xmm2", "xmm3", ""},
	{"vptest ymm0,ymm0", "c4 e2 7d 17 c0", "xmm0", "flags", ""},
	{"vpbroadcastb ymm0,xmm0", "c4 e2 7d 78 c0", "xmm0", "xmm0", ""},
	{"vmovd xmm0,esi", "c5 f9 6e c6", "rsi", "xmm0", ""},
	{"vmovd eax,xmm0", "c5 f9 7e c0", "xmm0", "rax", ""},
	{"vmovq rax,xmm1", "c4 e1 f9 7e c8", "xmm1", "rax", ""},
	{"vpxor xmm0,xmm0,xmm0", "c5 f9 ef c0", "", "xmm0", ""},
	{"vpxor ymm1,ymm2,ymm3", "c5 ed ef cb", "xmm2 xmm3", "xmm1", ""},
	{"vxorps xmm5,xmm5,xmm5", "c5 d0 57 ed", "", "xmm5", ""},
	{"vzeroupper", "c5 f8 77", "", "", ""},
	{"vzeroall", "c5 fc 77", "", "allxmm", ""},
	{"andn rax,rbx,rcx", "c4 e2 e0 f2 c1", "rbx rcx", "rax flags", ""},
	{"blsr eax,ecx", "c4 e2 78 f3 c9", "rcx", "rax flags", ""},
	{"blsmsk rdx,rsi", "c4 e2 e8 f3 d6", "rsi", "rdx flags", ""},
	{"bzhi eax,edi,esi", "c4 e2 48 f5 c7", "rdi rsi", "rax flags", ""},
	{"shlx rax,rdi,rcx", "c4 e2 f1 f7 c7", "rdi rcx", "rax", ""},
	{"sarx eax,edx,ecx", "c4 e2 72 f7 c2", "rdx rcx", "rax", ""},
	{"shrx r8,r9,r10", "c4 42 ab f7 c1", "r9 r10", "r8", ""},
	{"rorx rax,rbx,0x3", "c4 e3 fb f0 c3 03", "rbx", "rax", ""},
	{"mulx r8,r9,rcx", "c4 62 b3 f6 c1", "rdx rcx", "r8 r9", ""},
	{"pdep rax,rbx,rcx", "c4 e2 e3 f5 c1", "rbx rcx", "rax", ""},
	{"vpsrldq ymm1,ymm2,0x4", "c5 f5 73 da 04", "xmm2", "xmm1", ""},
	{"vpslld xmm3,xmm4,0x2", "c5 e1 72 f4 02", "xmm4", "xmm3", ""},
	{"vfmadd231pd ymm0,ymm1,ymm2", "c4 e2 f5 b8 c2", "xmm0 xmm1 xmm2", "xmm0", ""},
	{"vpblendvb ymm0,ymm1,ymm2,ymm3", "c4 e3 75 4c c2 30", "xmm1 xmm2 xmm3", "xmm0", ""},
	{"vpinsrb xmm0,xmm1,eax,0x3", "c4 e3 71 20 c0 03", "xmm1 rax", "xmm0", ""},
	{"vpextrb eax,xmm1,0x2", "c4 e3 79 14 c8 02", "xmm1", "rax", ""},
	{"vmovss xmm0,xmm1,xmm2", "c5 f2 10 c2", "xmm1 xmm2", "xmm0", ""},
	{"vmovss xmm0,DWORD PTR [rdi]", "c5 fa 10 07", "", "xmm0", "base=rdi"},
	{"vpgatherdd ymm0,DWORD PTR [rax+ymm1*4],ymm2", "c4 e2 6d 90 04 88", "xmm0 xmm1 xmm2", "xmm0 xmm2", "base=rax"},
	{"vextracti128 xmm1,ymm2,0x1", "c4 e3 7d 39 d1 01", "xmm2", "xmm1", ""},
	{"vpcmpistri xmm0,xmm1,0x18", "c4 e3 79 63 c1 18", "xmm0 xmm1", "rcx flags", ""},
	{"vmovdqu ymm0,YMMWORD PTR fs:[rax]", "64 c5 fe 6f 00", "fs", "xmm0", "base=rax"},
	{"jz .+0x10", "74 0e", "flags", "", "class=cond target=0x1010"},
	{"jrcxz .+5", "e3 03", "rcx", "", "class=cond target=0x1005"},
	{"loop .", "e2 fe", "rcx", "rcx", "class=cond target=0x1000"},
	{"call .+0x100", "e8 fb 00 00 00", "rsp", "rsp", "base=rsp class=call target=0x1100"},
	{"jmp .+0x1000", "e9 fb 0f 00 00", "", "", "class=jump target=0x2000"},
}

// regNames maps the names used in decodeCases to registers.
var regNames = map[string]Regs{
	"flags":  Of(tracepb.Register_RFLAGS),
	"fs":     Of(tracepb.Register_FS_BASE),
	"gs":     Of(tracepb.Register_GS_BASE),
	"rip":    Of(tracepb.Register_RIP),
	"x87":    Of(tracepb.Register_X87),
	"other":  Of(tracepb.Register_REG_OTHER),
	"allxmm": allXMM,
}

func init() {
	for i, n := range []string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"} {
		regNames[n] = Of(gpr(i))
	}
	for i := 8; i < 16; i++ {
		regNames["r"+strconv.Itoa(i)] = Of(gpr(i))
	}
	for i := 0; i < 16; i++ {
		regNames["xmm"+strconv.Itoa(i)] = Of(xmm(i))
	}
}

func parseRegs(t *testing.T, s string) Regs {
	t.Helper()
	var r Regs
	for _, f := range strings.Fields(s) {
		x, ok := regNames[f]
		if !ok {
			t.Fatalf("unknown register name %q", f)
		}
		r |= x
	}
	return r
}

func oneReg(t *testing.T, s string) tracepb.Register {
	t.Helper()
	r := parseRegs(t, s)
	for i := 0; i < 64; i++ {
		if r == 1<<uint(i) {
			return tracepb.Register(i)
		}
	}
	t.Fatalf("%q is not one register", s)
	return 0
}

var classNames = map[string]Class{
	"cond": CondJump, "jump": Jump, "ijump": IndirectJump, "call": Call, "icall": IndirectCall,
	"return": Return, "syscall": Syscall, "halt": Halt,
}

func TestDecode(t *testing.T) {
	const pc = 0x1000
	for _, c := range decodeCases {
		code, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		if err != nil {
			t.Fatalf("%s: %v", c.asm, err)
		}
		want := Info{Len: len(code), Uses: parseRegs(t, c.uses), Defs: parseRegs(t, c.defs)}
		for _, kv := range strings.Fields(c.more) {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "base":
				want.Base = oneReg(t, v)
			case "index":
				want.Index = oneReg(t, v)
			case "save":
				want.Save = oneReg(t, v)
			case "restore":
				want.Restore = oneReg(t, v)
			case "class":
				cl, ok := classNames[v]
				if !ok {
					t.Fatalf("%s: unknown class %q", c.asm, v)
				}
				want.Class = cl
			case "target":
				n, err := strconv.ParseUint(v, 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				want.Target = n
			default:
				t.Fatalf("%s: unknown field %q", c.asm, k)
			}
		}
		// Decode must not look beyond the instruction: trailing bytes
		// change nothing.
		for _, in := range [][]byte{code, append(append([]byte{}, code...), 0x90, 0xcc, 0x0f)} {
			got, err := Decode(pc, in)
			if err != nil {
				t.Errorf("%s (% x): %v", c.asm, code, err)
				break
			}
			if slicerFields(got) != want {
				t.Errorf("%s (% x):\n got %s\nwant %s", c.asm, code, got, want)
				break
			}
		}
	}
}

// slicerFields returns in without its value-flow fields, which TestFlow
// checks, and its comparison fields, which TestCompareAndCond checks.
func slicerFields(in Info) Info {
	in.Compare, in.Cond = false, CondNone
	in.Flow, in.Dst, in.Src, in.Src2 = FlowOther, 0, 0, 0
	in.DstMem, in.SrcMem, in.Sub = false, false, false
	in.Width, in.Scale, in.Imm, in.BitOp, in.Mask = 0, 0, 0, BitNone, 0
	return in
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		hex  string
		want error
	}{
		{"", ErrTruncated},
		{"48 8b", ErrTruncated},               // mov r64, r/m without ModRM
		{"48 8b 44 24", ErrTruncated},         // missing disp8
		{"c5 fe 6f", ErrTruncated},            // vmovdqu without ModRM
		{"c4 e2 7d 17", ErrTruncated},         // vptest without ModRM
		{"c4 e3 79 63 c1", ErrTruncated},      // vpcmpistri without imm8
		{"62 f1 fe 28 6f 07", ErrUnsupported}, // EVEX vmovdqu64
		{"c5 f8 ff c0", ErrUnsupported},       // no VEX 0F FF
		{"c4 e7 7d 17 c0", ErrUnsupported},    // VEX map 7
		{"c4 e2 78 f3 c1", ErrUnsupported},    // BMI group 0F38 F3 /0
		{"c5 fa 6f 07 f0", nil},               // vmovdqu with trailing bytes
		{"0f 0b", nil},                        // ud2
	} {
		code, _ := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		_, err := Decode(0x1234, code)
		if c.want == nil {
			if err != nil {
				t.Errorf("% x: %v", code, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("% x: error %v, want %v", code, err, c.want)
		} else if !strings.HasPrefix(err.Error(), "decode 0x1234: ") {
			t.Errorf("% x: error %q lacks the pc", code, err)
		}
	}
}
