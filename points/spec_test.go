package points

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		err  string
	}{
		{in: "list.c:40", want: Spec{File: "list.c", Line: 40, Instance: 1}},
		{in: "src/list.c:40#7", want: Spec{File: "src/list.c", Line: 40, Instance: 7}},
		{in: "list.c:40#all", want: Spec{File: "list.c", Line: 40, All: true}},
		{in: "C:/x/list.c:3", want: Spec{File: "C:/x/list.c", Line: 3, Instance: 1}},
		{in: "list.c", err: "want FILE:LINE"},
		{in: ":40", err: "want FILE:LINE"},
		{in: "list.c:", err: "want FILE:LINE"},
		{in: "list.c:x", err: "the line must be a number"},
		{in: "list.c:0", err: "the line must be a number"},
		{in: "list.c:4#0", err: "the instance after #"},
		{in: "list.c:4#", err: "the instance after #"},
		{in: "list.c:4#first", err: "the instance after #"},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSpec(%q) = %+v, %v; want error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if again, err := ParseSpec(got.String()); err != nil || again != got {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", got.String(), again, err, got)
		}
	}
}

func TestSelects(t *testing.T) {
	s := Spec{File: "a.c", Line: 1, Instance: 3}
	if s.Selects(2) || !s.Selects(3) {
		t.Errorf("#3 selects wrong instances")
	}
	if all := (Spec{File: "a.c", Line: 1, All: true}); !all.Selects(1) || !all.Selects(99) {
		t.Errorf("#all does not select every instance")
	}
}

func TestRoleOf(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want Role
	}{
		{"jle", []byte{0x7e, 0x05}, Branch},
		{"jne rel32", []byte{0x0f, 0x85, 0, 0, 0, 0}, Branch},
		{"jrcxz", []byte{0xe3, 0x02}, Branch},
		{"call rel32", []byte{0xe8, 0, 0, 0, 0}, CallInsn},
		{"call *%rax", []byte{0xff, 0xd0}, CallInsn},
		{"mov %rdx,0x8(%rax)", []byte{0x48, 0x89, 0x50, 0x08}, Store},
		{"addl $1,(%rax)", []byte{0x83, 0x00, 0x01}, Store},
		{"rep stosq", []byte{0xf3, 0x48, 0xab}, Store},
		{"mov 0x8(%rax),%rdx", []byte{0x48, 0x8b, 0x50, 0x08}, Other},
		{"cmpl $0xa,-0x4(%rbp)", []byte{0x83, 0x7d, 0xfc, 0x0a}, Other},
		{"push %rbp", []byte{0x55}, Other},
		{"jmp", []byte{0xeb, 0x00}, Other},
		{"vmovdqu %ymm0,(%rdi)", []byte{0xc5, 0xfe, 0x7f, 0x07}, Store},
	}
	for _, tt := range tests {
		if got := RoleOf(0x1000, tt.code); got != tt.want {
			t.Errorf("%s: RoleOf = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestRuleFor(t *testing.T) {
	store1 := Insn{Addr: 0x20, Code: []byte{0x48, 0x89, 0x50, 0x08}}
	store0 := Insn{Addr: 0x10, Code: []byte{0x83, 0x00, 0x01}}
	load := Insn{Addr: 0x08, Code: []byte{0x48, 0x8b, 0x50, 0x08}}
	call := Insn{Addr: 0x30, Code: []byte{0xe8, 0, 0, 0, 0}}
	jcc := Insn{Addr: 0x40, Code: []byte{0x7e, 0x05}}
	r, err := RuleFor(Suppress, []Insn{store1, load, store0})
	if err != nil || len(r.Counted) != 1 || r.Counted[0].Addr != 0x10 || len(r.Effect) != 2 || r.Call {
		t.Errorf("stores: %+v, %v; want the anchor 0x10 counted, both stores altered", r, err)
	}
	r, err = RuleFor(Suppress, []Insn{store1, call})
	if err != nil || !r.Call || len(r.Counted) != 1 || r.Counted[0].Addr != 0x30 {
		t.Errorf("call: %+v, %v; want the call counted", r, err)
	}
	if !r.Counts(0x30) || r.Counts(0x20) {
		t.Errorf("call rule counts the wrong instructions")
	}
	if _, err := RuleFor(Switch, []Insn{store1, call}); err != ErrNoBranch {
		t.Errorf("switch without a branch: %v, want ErrNoBranch", err)
	}
	if _, err := RuleFor(Suppress, []Insn{load, jcc}); err != ErrNoEffect {
		t.Errorf("suppress without a call or store: %v, want ErrNoEffect", err)
	}
	r, err = RuleFor(Switch, []Insn{jcc, load})
	if err != nil || len(r.Counted) != 1 || r.Counted[0].Addr != 0x40 {
		t.Errorf("switch: %+v, %v", r, err)
	}
}

func TestResolveFileAmbiguous(t *testing.T) {
	p := &Program{path: "/x/prog", files: []string{"/src/a/list.c", "/src/b/list.c", "/src/b/tree.c"}}
	if _, err := p.ResolveFile("list.c"); err == nil || !strings.Contains(err.Error(), "/src/a/list.c, /src/b/list.c") {
		t.Errorf("ambiguous: %v", err)
	}
	if f, err := p.ResolveFile("b/list.c"); err != nil || f != "/src/b/list.c" {
		t.Errorf("b/list.c: %q, %v", f, err)
	}
	if _, err := p.ResolveFile("st.c"); err == nil || !strings.Contains(err.Error(), "no source file st.c") {
		t.Errorf("st.c: %v", err)
	}
}
