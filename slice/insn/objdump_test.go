package insn

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const libcPath = "/usr/lib/x86_64-linux-gnu/libc.so.6"

var (
	objdumpSym  = regexp.MustCompile(`^[0-9a-f]+ <(.*)>:$`)
	objdumpInsn = regexp.MustCompile(`^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(\S*)\s*([^#<]*)`)
	attReg      = regexp.MustCompile(`^%([xy]mm|r|e)([0-9a-z]+)$`)
	ripTarget   = regexp.MustCompile(`\(%rip\),%r[0-9a-z]+\s+# ([0-9a-f]+)`)
)

// TestObjdumpLibc decodes every instruction objdump finds in libc's
// executable sections and compares lengths; in the AVX2 string functions
// no instruction may fail. Every value flow must pass checkFlow, and a
// rip-relative lea of a 64-bit register must load the address objdump
// computes.
func TestObjdumpLibc(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	if _, err := os.Stat(libcPath); err != nil {
		t.Skip("no libc at", libcPath)
	}
	f, err := elf.Open(libcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type sect struct {
		addr uint64
		data []byte
	}
	var sects []sect
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS {
			d, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			sects = append(sects, sect{s.Addr, d})
		}
	}
	bytesAt := func(addr uint64) []byte {
		for _, s := range sects {
			if addr >= s.addr && addr < s.addr+uint64(len(s.data)) {
				d := s.data[addr-s.addr:]
				return d[:min(15, len(d))]
			}
		}
		return nil
	}
	out, err := exec.Command("objdump", "-d", "-w", libcPath).Output()
	if err != nil {
		t.Fatal(err)
	}
	var total, ok, lenMatch, bad, avx2, avx2Fail, evex int
	flows := map[Flow]int{}
	ripLeas := 0
	failed := map[string]int{}
	var sym string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := objdumpSym.FindStringSubmatch(line); m != nil {
			sym = m[1]
			continue
		}
		m := objdumpInsn.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		mnem := m[3]
		if mnem == "(bad)" || mnem == "" {
			bad++
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m[2]), " ", ""))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		code := bytesAt(addr)
		if code == nil {
			t.Fatalf("no section holds %#x", addr)
		}
		isEVEX := raw[0] == 0x62 || len(raw) > 1 && raw[1] == 0x62 && (raw[0] == 0x64 || raw[0] == 0x65 || raw[0] == 0x67)
		if isEVEX || mnem[0] == 'k' { // EVEX, or AVX-512 mask register instructions
			evex++ // AVX-512: not supported (Valgrind does not offer it)
			continue
		}
		total++
		// libc.so.6 is stripped of the internal names (__strlen_avx2), so
		// the AVX2 code is found by its VEX prefixes.
		p := 0
		for p < len(raw)-1 && (raw[p] == 0x64 || raw[p] == 0x65 || raw[p] == 0x67) {
			p++
		}
		inAVX2 := raw[p] == 0xc4 || raw[p] == 0xc5
		if inAVX2 {
			avx2++
		}
		in, err := Decode(addr, code)
		if err != nil {
			failed[mnem]++
			if inAVX2 {
				avx2Fail++
				t.Errorf("%s: %s: %v", sym, line, err)
			}
			continue
		}
		ok++
		if in.Len == len(raw) {
			lenMatch++
		} else if testing.Verbose() {
			t.Logf("length %d, objdump %d: %s", in.Len, len(raw), line)
		}
		if inAVX2 {
			checkVEXOperands(t, line, mnem, m[4], in)
		}
		if !in.Uses.Valid() || !in.Defs.Valid() {
			t.Errorf("%s: invalid register bits %#x %#x", line, in.Uses, in.Defs)
		}
		if err := checkFlow(in); err != nil {
			t.Errorf("%s: flow: %v: %v", line, err, in)
		}
		flows[in.Flow]++
		// objdump computes the address a rip-relative lea loads.
		if t2 := ripTarget.FindStringSubmatch(line); t2 != nil && mnem == "lea" {
			ripLeas++
			want, _ := strconv.ParseUint(t2[1], 16, 64)
			if in.Flow != FlowConst || uint64(in.Imm) != want {
				t.Errorf("%s: flow %v imm %#x, want const %#x", line, in.Flow, in.Imm, want)
			}
		}
	}
	var fails []string
	for k, v := range failed {
		fails = append(fails, k+"="+strconv.Itoa(v))
	}
	sort.Strings(fails)
	t.Logf("libc: %d instructions (plus %d EVEX skipped, %d (bad)); decoded %d (%.4f%%), length agrees on %d (%.4f%% of all); VEX: %d instructions, %d failures",
		total, evex, bad, ok, 100*float64(ok)/float64(total), lenMatch, 100*float64(lenMatch)/float64(total), avx2, avx2Fail)
	t.Logf("value flows: move %d, const %d, add %d, swap %d, condmove %d, other %d; %d rip-relative lea addresses agree with objdump",
		flows[FlowMove], flows[FlowConst], flows[FlowAdd], flows[FlowSwap], flows[FlowCondMove], flows[FlowOther], ripLeas)
	if len(fails) > 0 {
		t.Logf("failures by mnemonic: %s", strings.Join(fails, " "))
	}
	if float64(lenMatch) < 0.999*float64(total) {
		t.Errorf("length agrees on only %d of %d instructions", lenMatch, total)
	}
	if avx2 == 0 {
		t.Errorf("no VEX instructions found in %s", libcPath)
	}
}

// checkVEXOperands compares Decode's registers with objdump's AT&T operand
// list: the last operand, if a register, is written (except by compares and
// tests), and the other register operands are read.
func checkVEXOperands(t *testing.T, line, mnem, ops string, in Info) {
	t.Helper()
	var regs []string
	depth := 0
	cur := ""
	for _, c := range strings.TrimSpace(ops) {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			regs = append(regs, cur)
			cur = ""
			continue
		}
		cur += string(c)
	}
	if cur != "" {
		regs = append(regs, cur)
	}
	loc := func(s string) (Regs, bool) {
		m := attReg.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			return 0, false
		}
		if m[1] != "r" && m[1] != "e" {
			n, _ := strconv.Atoi(m[2])
			return Of(xmm(n)), true
		}
		names := []string{"ax", "cx", "dx", "bx", "sp", "bp", "si", "di"}
		for i, nm := range names {
			if m[2] == nm {
				return Of(gpr(i)), true
			}
		}
		n, err := strconv.Atoi(strings.TrimRight(m[2], "d"))
		if err != nil {
			return 0, false
		}
		return Of(gpr(n)), true
	}
	for i, op := range regs {
		r, ok := loc(op)
		if !ok {
			continue
		}
		last := i == len(regs)-1
		switch {
		case last && mnem != "vptest":
			if in.Defs&r == 0 {
				t.Errorf("%s: destination %s not in Defs %#x", line, op, in.Defs)
			}
		case i == len(regs)-2 && mnem == "mulx":
		default:
			// A zero idiom reads neither source.
			if in.Uses&r == 0 && !(len(regs) == 3 && regs[0] == regs[1]) {
				t.Errorf("%s: source %s not in Uses %#x", line, op, in.Uses)
			}
		}
	}
}
