package insn

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// flowCases are real encodings, assembled with GNU as (Intel syntax) and
// read back with objdump, with their expected value flow: the Flow's name,
// then dst= and src= (a register or mem), src2= (register*scale), imm=,
// w= (Width), and the flags srcmem (SrcMem with a register Src) and sub.
// Absent fields are zero. Each is decoded at pc 0x1000.
var flowCases = []struct {
	asm, hex, want string
}{
	{"mov rax,rbx", "48 89 d8", "move dst=rax src=rbx w=8"},
	{"mov eax,ebx", "89 d8", "move dst=rax src=rbx w=4"},
	{"mov ax,bx", "66 89 d8", "move dst=rax src=rbx w=2"},
	{"mov al,bl", "88 d8", "move dst=rax src=rbx w=1"},
	{"mov ah,bl", "88 dc", "other"},
	{"mov rax,QWORD PTR [rsp+0x8]", "48 8b 44 24 08", "move dst=rax src=mem w=8"},
	{"mov QWORD PTR [rdi+0x10],rsi", "48 89 77 10", "move dst=mem src=rsi w=8"},
	{"mov BYTE PTR [rdi],al", "88 07", "move dst=mem src=rax w=1"},
	{"mov WORD PTR [rdi],ax", "66 89 07", "move dst=mem src=rax w=2"},
	{"mov rax,QWORD PTR fs:0x28", "64 48 8b 04 25 28 00 00 00", "move dst=rax src=mem w=8"},
	{"mov r9,r10", "4d 89 d1", "move dst=r9 src=r10 w=8"},
	{"movzx eax,BYTE PTR [rdi]", "0f b6 07", "move dst=rax src=mem w=4"},
	{"movzx ecx,dl", "0f b6 ca", "move dst=rcx src=rdx w=4"},
	{"movsx rax,cx", "48 0f bf c1", "move dst=rax src=rcx w=8"},
	{"movsxd rax,DWORD PTR [rsi]", "48 63 06", "move dst=rax src=mem w=8"},
	{"movsxd rdx,eax", "48 63 d0", "move dst=rdx src=rax w=8"},
	{"movzx eax,ah", "0f b6 c4", "other"},
	{"cdqe", "48 98", "move dst=rax src=rax w=8"},
	{"cwde", "98", "move dst=rax src=rax w=4"},
	{"cbw", "66 98", "move dst=rax src=rax w=2"},
	{"movbe eax,DWORD PTR [rdi]", "0f 38 f0 07", "other"},
	{"mov eax,0x2a", "b8 2a 00 00 00", "const dst=rax imm=0x2a w=4"},
	{"mov rax,-1", "48 c7 c0 ff ff ff ff", "const dst=rax imm=-1 w=8"},
	{"movabs rax,0x123456789abcdef0", "48 b8 f0 de bc 9a 78 56 34 12", "const dst=rax imm=0x123456789abcdef0 w=8"},
	{"mov DWORD PTR [rdi],0xffffffff", "c7 07 ff ff ff ff", "const dst=mem imm=-1 w=4"},
	{"mov BYTE PTR [rdi],0x80", "c6 07 80", "const dst=mem imm=-0x80 w=1"},
	{"mov al,0xff", "b0 ff", "const dst=rax imm=-1 w=1"},
	{"mov QWORD PTR [rsp+0x8],0x0", "48 c7 44 24 08 00 00 00 00", "const dst=mem imm=0 w=8"},
	{"mov ax,0x8000", "66 b8 00 80", "const dst=rax imm=-0x8000 w=2"},
	{"xor eax,eax", "31 c0", "const dst=rax imm=0 w=4"},
	{"xor r8d,r8d", "45 31 c0", "const dst=r8 imm=0 w=4"},
	{"sub rdx,rdx", "48 29 d2", "const dst=rdx imm=0 w=8"},
	{"xor al,al", "30 c0", "const dst=rax imm=0 w=1"},
	{"pxor xmm0,xmm0", "66 0f ef c0", "const dst=xmm0 imm=0 w=16"},
	{"xorps xmm1,xmm1", "0f 57 c9", "const dst=xmm1 imm=0 w=16"},
	{"pcmpeqd xmm2,xmm2", "66 0f 76 d2", "const dst=xmm2 imm=-1 w=16"},
	{"psubb xmm9,xmm9", "66 45 0f f8 c9", "const dst=xmm9 imm=0 w=16"},
	{"xor eax,ebx", "31 d8", "other"},
	{"sbb eax,eax", "19 c0", "other"},
	{"lea rax,[rip+0x10]", "48 8d 05 10 00 00 00", "const dst=rax imm=0x1017 w=8"},
	{"lea rdi,[rip-0x10]", "48 8d 3d f0 ff ff ff", "const dst=rdi imm=0xff7 w=8"},
	{"lea eax,[rip+0x10]", "8d 05 10 00 00 00", "const dst=rax imm=0x1016 w=4"},
	{"lea eax,ds:0x601000", "8d 04 25 00 10 60 00", "const dst=rax imm=0x601000 w=4"},
	{"add rax,0x8", "48 83 c0 08", "add dst=rax src=rax imm=8 w=8"},
	{"sub rsp,0x18", "48 83 ec 18", "add dst=rsp src=rsp imm=-0x18 w=8"},
	{"add rax,rbx", "48 01 d8", "add dst=rax src=rax src2=rbx*1 w=8"},
	{"sub rax,rbx", "48 29 d8", "add dst=rax src=rax src2=rbx*1 sub w=8"},
	{"add rax,rax", "48 01 c0", "add dst=rax src=rax src2=rax*1 w=8"},
	{"add rax,QWORD PTR [rdi]", "48 03 07", "add dst=rax src=rax srcmem w=8"},
	{"sub rcx,QWORD PTR [rsp+0x8]", "48 2b 4c 24 08", "add dst=rcx src=rcx srcmem sub w=8"},
	{"add QWORD PTR [rdi],rax", "48 01 07", "add dst=mem src=mem src2=rax*1 w=8"},
	{"add DWORD PTR [rdi],0x1", "83 07 01", "add dst=mem src=mem imm=1 w=4"},
	{"sub QWORD PTR [rdi+8],0x10", "48 83 6f 08 10", "add dst=mem src=mem imm=-0x10 w=8"},
	{"inc rcx", "48 ff c1", "add dst=rcx src=rcx imm=1 w=8"},
	{"dec DWORD PTR [rax]", "ff 08", "add dst=mem src=mem imm=-1 w=4"},
	{"add al,0xff", "04 ff", "add dst=rax src=rax imm=-1 w=1"},
	{"add ax,0x10", "66 83 c0 10", "add dst=rax src=rax imm=0x10 w=2"},
	{"sub r11d,0x80000000", "41 81 eb 00 00 00 80", "add dst=r11 src=r11 imm=0x80000000 w=4"},
	{"lea rax,[rbx+0x8]", "48 8d 43 08", "add dst=rax src=rbx imm=8 w=8"},
	{"lea rax,[rbx+rcx*2+0x8]", "48 8d 44 4b 08", "add dst=rax src=rbx src2=rcx*2 imm=8 w=8"},
	{"lea rdx,[rax+rax*1]", "48 8d 14 00", "add dst=rdx src=rax src2=rax*1 w=8"},
	{"lea rax,[rdi-0x1]", "48 8d 47 ff", "add dst=rax src=rdi imm=-1 w=8"},
	{"lea rax,[rbx-0x1000]", "48 8d 83 00 f0 ff ff", "add dst=rax src=rbx imm=-0x1000 w=8"},
	{"lea rax,[rbx]", "48 8d 03", "move dst=rax src=rbx w=8"},
	{"lea rax,[rcx*1+0x10]", "48 8d 04 0d 10 00 00 00", "add dst=rax src=rcx imm=0x10 w=8"},
	{"lea rax,[rcx*8+0x0]", "48 8d 04 cd 00 00 00 00", "other"},
	{"lea eax,[rdi+rsi*1]", "8d 04 37", "add dst=rax src=rdi src2=rsi*1 w=4"},
	{"lea r12,[r13+0x0]", "4d 8d 65 00", "move dst=r12 src=r13 w=8"},
	{"lea cx,[rbx+0x2]", "66 8d 4b 02", "add dst=rcx src=rbx imm=2 w=2"},
	{"adc rax,rbx", "48 11 d8", "other"},
	{"neg rax", "48 f7 d8", "other"},
	{"xchg rbx,rax", "48 93", "swap dst=rbx src=rax w=8"},
	{"xchg DWORD PTR [rdi],eax", "87 07", "swap dst=mem src=rax w=4"},
	{"xchg rcx,rdx", "48 87 d1", "swap dst=rcx src=rdx w=8"},
	{"xchg al,bl", "86 d8", "swap dst=rax src=rbx w=1"},
	{"lock xadd DWORD PTR [rdi],eax", "f0 0f c1 07", "other"},
	{"cmove rax,rbx", "48 0f 44 c3", "condmove dst=rax src=rbx w=8"},
	{"cmovne eax,DWORD PTR [rdi]", "0f 45 07", "condmove dst=rax src=mem w=4"},
	{"cmovg cx,dx", "66 0f 4f ca", "condmove dst=rcx src=rdx w=2"},
	{"push rbx", "53", "move dst=mem src=rbx w=8"},
	{"push r15", "41 57", "move dst=mem src=r15 w=8"},
	{"push QWORD PTR [rax+0x8]", "ff 70 08", "move dst=mem src=mem w=8"},
	{"push 0x1", "6a 01", "const dst=mem imm=1 w=8"},
	{"push -128", "6a 80", "const dst=mem imm=-0x80 w=8"},
	{"push 0x12345678", "68 78 56 34 12", "const dst=mem imm=0x12345678 w=8"},
	{"pop rbp", "5d", "move dst=rbp src=mem w=8"},
	{"pop QWORD PTR [rdi]", "8f 07", "move dst=mem src=mem w=8"},
	{"push fs", "0f a0", "other"},
	{"pushw 0x1234", "66 68 34 12", "const dst=mem imm=0x1234 w=2"},
	{"rep movsb", "f3 a4", "move dst=mem src=mem w=1"},
	{"movsq", "48 a5", "move dst=mem src=mem w=8"},
	{"movsd", "a5", "move dst=mem src=mem w=4"},
	{"rep stosq", "f3 48 ab", "move dst=mem src=rax w=8"},
	{"stosb", "aa", "move dst=mem src=rax w=1"},
	{"lodsb", "ac", "move dst=rax src=mem w=1"},
	{"cmpsb", "a6", "other"},
	{"movaps xmm0,XMMWORD PTR [rdi]", "0f 28 07", "move dst=xmm0 src=mem w=16"},
	{"movups XMMWORD PTR [rsi],xmm1", "0f 11 0e", "move dst=mem src=xmm1 w=16"},
	{"movdqa xmm2,xmm3", "66 0f 6f d3", "move dst=xmm2 src=xmm3 w=16"},
	{"movdqu xmm8,XMMWORD PTR [rax]", "f3 44 0f 6f 00", "move dst=xmm8 src=mem w=16"},
	{"movq xmm0,rax", "66 48 0f 6e c0", "move dst=xmm0 src=rax w=8"},
	{"movq rax,xmm0", "66 48 0f 7e c0", "move dst=rax src=xmm0 w=8"},
	{"movd xmm1,eax", "66 0f 6e c8", "move dst=xmm1 src=rax w=4"},
	{"movd eax,xmm1", "66 0f 7e c8", "move dst=rax src=xmm1 w=4"},
	{"movq xmm0,xmm1", "f3 0f 7e c1", "move dst=xmm0 src=xmm1 w=8"},
	{"movq QWORD PTR [rdi],xmm0", "66 0f d6 07", "move dst=mem src=xmm0 w=8"},
	{"movss xmm0,DWORD PTR [rdi]", "f3 0f 10 07", "move dst=xmm0 src=mem w=4"},
	{"movsd xmm0,xmm1", "f2 0f 10 c1", "move dst=xmm0 src=xmm1 w=8"},
	{"movnti QWORD PTR [rdi],rax", "48 0f c3 07", "move dst=mem src=rax w=8"},
	{"movq mm0,QWORD PTR [rdi]", "0f 6f 07", "other"},
	{"addps xmm0,xmm1", "0f 58 c1", "other"},
	{"pxor xmm0,xmm1", "66 0f ef c1", "other"},
	{"lddqu xmm1,[rsi]", "f2 0f f0 0e", "move dst=xmm1 src=mem w=16"},
	{"vmovdqu ymm0,YMMWORD PTR [rdi]", "c5 fe 6f 07", "move dst=xmm0 src=mem w=32"},
	{"vmovdqu YMMWORD PTR [rdi+0x20],ymm1", "c5 fe 7f 4f 20", "move dst=mem src=xmm1 w=32"},
	{"vmovdqa ymm2,ymm3", "c5 fd 6f d3", "move dst=xmm2 src=xmm3 w=32"},
	{"vmovdqa xmm2,xmm3", "c5 f9 6f d3", "move dst=xmm2 src=xmm3 w=16"},
	{"vmovups ymm1,YMMWORD PTR [rsi]", "c5 fc 10 0e", "move dst=xmm1 src=mem w=32"},
	{"vmovaps XMMWORD PTR [rdi],xmm4", "c5 f8 29 27", "move dst=mem src=xmm4 w=16"},
	{"vmovupd ymm10,ymm11", "c4 41 7d 10 d3", "move dst=xmm10 src=xmm11 w=32"},
	{"vmovd xmm0,esi", "c5 f9 6e c6", "move dst=xmm0 src=rsi w=4"},
	{"vmovd eax,xmm0", "c5 f9 7e c0", "move dst=rax src=xmm0 w=4"},
	{"vmovq rax,xmm1", "c4 e1 f9 7e c8", "move dst=rax src=xmm1 w=8"},
	{"vmovq xmm1,rax", "c4 e1 f9 6e c8", "move dst=xmm1 src=rax w=8"},
	{"vmovq xmm0,QWORD PTR [rdi]", "c5 fa 7e 07", "move dst=xmm0 src=mem w=8"},
	{"vmovq QWORD PTR [rdi],xmm0", "c5 f9 d6 07", "move dst=mem src=xmm0 w=8"},
	{"vmovss xmm0,DWORD PTR [rdi]", "c5 fa 10 07", "move dst=xmm0 src=mem w=4"},
	{"vmovsd QWORD PTR [rdi],xmm0", "c5 fb 11 07", "move dst=mem src=xmm0 w=8"},
	{"vmovss xmm0,xmm1,xmm2", "c5 f2 10 c2", "other"},
	{"vmovntdq YMMWORD PTR [rdi],ymm0", "c5 fd e7 07", "move dst=mem src=xmm0 w=32"},
	{"vmovlps QWORD PTR [rdi],xmm0", "c5 f8 13 07", "other"},
	{"vpxor xmm0,xmm0,xmm0", "c5 f9 ef c0", "const dst=xmm0 imm=0 w=16"},
	{"vpxor ymm1,ymm1,ymm1", "c5 f5 ef c9", "const dst=xmm1 imm=0 w=32"},
	{"vxorps xmm5,xmm5,xmm5", "c5 d0 57 ed", "const dst=xmm5 imm=0 w=16"},
	{"vpcmpeqb ymm2,ymm2,ymm2", "c5 ed 74 d2", "const dst=xmm2 imm=-1 w=32"},
	{"vpcmpeqq xmm3,xmm3,xmm3", "c4 e2 61 29 db", "const dst=xmm3 imm=-1 w=16"},
	{"vpxor ymm1,ymm2,ymm3", "c5 ed ef cb", "other"},
	{"vsubps ymm0,ymm1,ymm1", "c5 f4 5c c1", "other"},
	{"vpbroadcastb ymm0,xmm0", "c4 e2 7d 78 c0", "other"},
	{"vmovdqu ymm0,YMMWORD PTR fs:[rax]", "64 c5 fe 6f 00", "move dst=xmm0 src=mem w=32"},
	{"vmovdqu ymm12,YMMWORD PTR [r8+rcx*1+0x20]", "c4 41 7e 6f 64 08 20", "move dst=xmm12 src=mem w=32"},
	{"call rax", "ff d0", "other"},
	{"ret", "c3", "other"},
}

var flowNames = map[string]Flow{
	"other": FlowOther, "move": FlowMove, "const": FlowConst, "add": FlowAdd, "swap": FlowSwap, "condmove": FlowCondMove,
}

// parseFlow builds the flow fields that a flowCases entry describes.
func parseFlow(t *testing.T, s string) Info {
	t.Helper()
	fields := strings.Fields(s)
	f, ok := flowNames[fields[0]]
	if !ok {
		t.Fatalf("%q: unknown flow", s)
	}
	want := Info{Flow: f}
	operand := func(v string) (tracepb.Register, bool) {
		if v == "mem" {
			return 0, true
		}
		return oneReg(t, v), false
	}
	for _, kv := range fields[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "dst":
			want.Dst, want.DstMem = operand(v)
		case "src":
			want.Src, want.SrcMem = operand(v)
		case "src2":
			r, sc, ok := strings.Cut(v, "*")
			n, err := strconv.Atoi(sc)
			if !ok || err != nil {
				t.Fatalf("%q: bad src2", s)
			}
			want.Src2, want.Scale = oneReg(t, r), uint8(n)
		case "imm":
			n, err := strconv.ParseInt(v, 0, 64)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			want.Imm = n
		case "w":
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			want.Width = uint8(n)
		case "srcmem":
			want.SrcMem = true
		case "sub":
			want.Sub = true
		default:
			t.Fatalf("%q: unknown field %q", s, k)
		}
	}
	return want
}

func decodeHex(t *testing.T, asm, h string) []byte {
	t.Helper()
	code, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
	if err != nil {
		t.Fatalf("%s: %v", asm, err)
	}
	return code
}

func TestFlow(t *testing.T) {
	const pc = 0x1000
	seen := map[Flow]int{}
	for _, c := range flowCases {
		code := decodeHex(t, c.asm, c.hex)
		want := parseFlow(t, c.want)
		got, err := Decode(pc, code)
		if err != nil {
			t.Errorf("%s (% x): %v", c.asm, code, err)
			continue
		}
		if got.Len != len(code) {
			t.Errorf("%s (% x): length %d", c.asm, code, got.Len)
		}
		if got.flowFields() != want {
			t.Errorf("%s (% x):\n got %s\nwant %s", c.asm, code, got.flowFields(), want)
		}
		if err := checkFlow(got); err != nil {
			t.Errorf("%s (% x): %v: %v", c.asm, code, err, got)
		}
		seen[want.Flow]++
	}
	for f := FlowOther; f <= FlowCondMove; f++ {
		if seen[f] == 0 {
			t.Errorf("no case of %v", f)
		}
	}
}

// TestFlowDecodeCases checks that the flow of every decodeCases entry is
// consistent with its registers.
func TestFlowDecodeCases(t *testing.T) {
	for _, c := range decodeCases {
		in, err := Decode(0x1000, decodeHex(t, c.asm, c.hex))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkFlow(in); err != nil {
			t.Errorf("%s: %v: %v", c.asm, err, in)
		}
	}
}

// checkFlow checks that an Info's value flow is well formed and agrees
// with its Uses and Defs: a register destination is written, register
// sources are read, and fields a flow does not use are zero.
func checkFlow(in Info) error {
	f := in.flowFields()
	switch {
	case in.Flow > FlowCondMove:
		return fmt.Errorf("flow %d", in.Flow)
	case in.Flow == FlowOther:
		if f != (Info{}) {
			return fmt.Errorf("FlowOther with operands")
		}
		return nil
	}
	switch in.Width {
	case 1, 2, 4, 8, 16, 32:
	default:
		return fmt.Errorf("width %d", in.Width)
	}
	if in.DstMem == (in.Dst != 0) {
		return fmt.Errorf("destination: register %v, memory %v", in.Dst, in.DstMem)
	}
	if in.Dst != 0 && !in.Defs.Has(in.Dst) {
		return fmt.Errorf("destination %v not written", in.Dst)
	}
	if in.Dst >= tracepb.Register_XMM0 && in.Dst <= tracepb.Register_XMM15 {
		if in.Width < 4 {
			return fmt.Errorf("vector width %d", in.Width)
		}
	} else if in.Dst != 0 && in.Width > 8 {
		return fmt.Errorf("GPR width %d", in.Width)
	}
	for _, r := range []tracepb.Register{in.Src, in.Src2} {
		if r != 0 && !in.Uses.Has(r) {
			return fmt.Errorf("source %v not read", r)
		}
	}
	if (in.Src2 != 0) != (in.Scale != 0) {
		return fmt.Errorf("src2 %v with scale %d", in.Src2, in.Scale)
	}
	switch in.Scale {
	case 0, 1, 2, 4, 8:
	default:
		return fmt.Errorf("scale %d", in.Scale)
	}
	if in.Flow != FlowAdd && (in.Src2 != 0 || in.Sub) {
		return fmt.Errorf("src2 or sub outside FlowAdd")
	}
	if in.Flow != FlowAdd && in.Flow != FlowConst && in.Imm != 0 {
		return fmt.Errorf("imm %#x", in.Imm)
	}
	switch in.Flow {
	case FlowConst:
		if in.Src != 0 || in.SrcMem {
			return fmt.Errorf("a constant with a source")
		}
	case FlowMove, FlowSwap, FlowCondMove:
		if in.SrcMem == (in.Src != 0) {
			return fmt.Errorf("source: register %v, memory %v", in.Src, in.SrcMem)
		}
		if in.Flow == FlowSwap && (in.Src != 0 && !in.Defs.Has(in.Src) || in.Dst != 0 && !in.Uses.Has(in.Dst)) {
			return fmt.Errorf("swap operands not both read and written")
		}
		if in.Flow == FlowCondMove && !in.Uses.Has(in.Dst) {
			return fmt.Errorf("cmov destination not read")
		}
	case FlowAdd:
		if in.Src == 0 && !(in.DstMem && in.SrcMem) {
			return fmt.Errorf("addition without a first addend")
		}
		if in.Sub && in.Src2 == 0 && !(in.SrcMem && !in.DstMem) {
			return fmt.Errorf("sub without a second addend")
		}
	}
	return nil
}

// TestBitOp: bitwise operations with an immediate are marked, others not.
func TestBitOp(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want BitOp
		imm  int64
	}{
		{"or al, 1", []byte{0x0c, 0x01}, BitOr, 1},
		{"and dword [rdi], 0xfffffffe", []byte{0x83, 0x27, 0xfe}, BitAnd, -2},
		{"test byte [rdi+8], 1", []byte{0xf6, 0x47, 0x08, 0x01}, BitTest, 1},
		{"xor dword [rdi], 4", []byte{0x83, 0x37, 0x04}, BitXor, 4},
		{"bt eax, 5", []byte{0x0f, 0xba, 0xe0, 0x05}, BitBT, 5},
		{"bts rax, 3", []byte{0x48, 0x0f, 0xba, 0xe8, 0x03}, BitBTS, 3},
		{"xor eax, eax", []byte{0x31, 0xc0}, BitNone, 0},
		{"and rax, rbx", []byte{0x48, 0x21, 0xd8}, BitNone, 0},
		{"add rax, 8", []byte{0x48, 0x83, 0xc0, 0x08}, BitNone, 8},
		{"cmp rax, 1", []byte{0x48, 0x83, 0xf8, 0x01}, BitNone, 0},
	} {
		in, err := Decode(0x1000, c.code)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if in.BitOp != c.want || c.want != BitNone && in.Mask != c.imm {
			t.Errorf("%s: BitOp %v mask %d, want %v mask %d", c.name, in.BitOp, in.Mask, c.want, c.imm)
		}
	}
}
