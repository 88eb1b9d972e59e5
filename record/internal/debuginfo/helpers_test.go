package debuginfo

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// needTool returns the path of a command-line tool or skips the test.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

// compileC writes src to dir/name.c and compiles it with gcc into
// dir/name with the given flags.
func compileC(t testing.TB, dir, name, src string, flags ...string) string {
	t.Helper()
	gcc := needTool(t, "gcc")
	cfile := filepath.Join(dir, name+".c")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append(append([]string{}, flags...), "-o", out, cfile)
	cmd := exec.Command(gcc, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// lineOf returns the 1-based line of src holding marker.
func lineOf(t testing.TB, src, marker string) uint32 {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return uint32(i + 1)
		}
	}
	t.Fatalf("marker %q not in source", marker)
	return 0
}

// mapping is an executable mapping as the probe reports it.
type mapping struct {
	start, end, offset uint64
}

// execMapping returns the mapping of path's executable PT_LOAD segment
// when the file is loaded at base (0 for ET_EXEC files).
func execMapping(t testing.TB, path string, base uint64) mapping {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			start := base + p.Vaddr&^(pageSize-1)
			end := base + (p.Vaddr+p.Filesz+pageSize-1)&^(pageSize-1)
			return mapping{start: start, end: end, offset: p.Off &^ (pageSize - 1)}
		}
	}
	t.Fatalf("%s: no executable PT_LOAD", path)
	return mapping{}
}

// openAt opens path as if loaded at base.
func openAt(t testing.TB, path string, base uint64) *Module {
	t.Helper()
	mp := execMapping(t, path, base)
	m, err := Open(path, mp.start, mp.end, mp.offset)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// funcSym is a function symbol from the ELF symbol table.
type funcSym struct {
	name       string
	addr, size uint64
}

// funcSyms returns the defined function symbols of path's .symtab by name.
func funcSyms(t testing.TB, path string) map[string]funcSym {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]funcSym)
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && s.Value != 0 {
			out[s.Name] = funcSym{name: s.Name, addr: s.Value, size: s.Size}
		}
	}
	return out
}

// addr2line is one answer of `addr2line -f`.
type addr2lineAnswer struct {
	function string
	file     string
	line     uint32
}

// runAddr2line asks addr2line about link-time addresses.
func runAddr2line(t testing.TB, path string, addrs []uint64) []addr2lineAnswer {
	t.Helper()
	tool := needTool(t, "addr2line")
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool, "-f", "-e", path)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	var res []addr2lineAnswer
	for sc.Scan() {
		fn := sc.Text()
		if !sc.Scan() {
			break
		}
		pos := sc.Text()
		if i := strings.Index(pos, " ("); i >= 0 {
			pos = pos[:i] // " (discriminator N)"
		}
		a := addr2lineAnswer{function: fn}
		if i := strings.LastIndexByte(pos, ':'); i >= 0 {
			a.file = pos[:i]
			if n, err := strconv.ParseUint(pos[i+1:], 10, 32); err == nil {
				a.line = uint32(n)
			}
		}
		if a.function == "??" {
			a.function = ""
		}
		if a.file == "??" {
			a.file = ""
		}
		res = append(res, a)
	}
	if len(res) != len(addrs) {
		t.Fatalf("addr2line gave %d answers for %d addresses", len(res), len(addrs))
	}
	return res
}
