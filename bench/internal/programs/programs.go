// Package programs defines the real programs that the benchmark tools
// bench/recordbench and bench/bugsbench run: a linked list and a binary
// search tree in C (testdata/programs/list.c and tree.c), ls -R
// /usr/include, a python3 loop and a perl loop, at the benchmark's work
// sizes; and it finds or builds each program's executable on the machine
// at hand (Program.Prepare).
package programs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// Sizes are the programs' work sizes.
type Sizes struct {
	List   int // nodes of list.c's linked list
	Tree   int // keys of tree.c's binary search tree
	Python int // iterations of the python3 loop
	Perl   int // iterations of the perl loop
}

// Full returns the benchmark's sizes. The list takes about 15 ms
// natively, the tree about 70 ms; under record the whole recordbench run
// takes about four minutes on a 2-core machine, most of it python3 (its
// start alone is some 100 M events).
func Full() Sizes {
	return Sizes{List: 100_000, Tree: 150_000, Python: 100_000, Perl: 300_000}
}

// Small returns a tenth of the Full sizes, for quicker runs.
func Small() Sizes {
	f := Full()
	return Sizes{List: f.List / 10, Tree: f.Tree / 10, Python: f.Python / 10, Perl: f.Perl / 10}
}

// Named returns the sizes called name, "full" or "small", and whether
// there are sizes of that name.
func Named(name string) (Sizes, bool) {
	switch name {
	case "full":
		return Full(), true
	case "small":
		return Small(), true
	}
	return Sizes{}, false
}

// Program is one benchmark program.
type Program struct {
	Name   string   // "list", "tree", "ls", "python3" or "perl"
	Tool   string   // executable looked up on PATH: the program, or gcc for a C program
	Source string   // testdata/programs/SOURCE.c to build with gcc, or ""
	Needs  string   // a path that must exist for the command to make sense, or ""
	Args   []string // the program's arguments
	// About says what the program does, in one sentence without its final
	// period (recordbench's results).
	About string
	// Brief says it in fewer words (bugsbench's results).
	Brief string
	// RealExe, for an interpreter, are arguments that make it print its
	// own executable's path: when the tool on PATH is a wrapper script (a
	// pyenv shim), the benchmarks run the interpreter itself, so that
	// Valgrind's cost for the wrapper's shells does not blur the numbers.
	RealExe []string
}

// Command returns the name the program is run by: the C program's (its
// Source), or the tool's.
func (p Program) Command() string {
	if p.Source != "" {
		return p.Source
	}
	return p.Tool
}

// GCCFlags returns the flags the C programs are built with (plus
// -I ROOT/include).
func GCCFlags() []string { return []string{"-O2", "-g"} }

// List returns the benchmark programs at sizes s, in the order the
// benchmarks run them.
func List(s Sizes) []Program {
	py := fmt.Sprintf("s = 0\nfor i in range(%d):\n    s += i * i\nprint(s)", s.Python)
	pl := fmt.Sprintf(`my $s = 0; $s += $_ * $_ for 1..%d; print "$s\n"`, s.Perl)
	return []Program{
		{Name: "list", Tool: "gcc", Source: "list", Args: []string{strconv.Itoa(s.List)},
			About: fmt.Sprintf("testdata/programs/list.c: builds, prints, walks and frees a linked list of %s malloc'd nodes", results.Group(uint64(s.List))),
			Brief: fmt.Sprintf("testdata/programs/list.c: a linked list of %s malloc'd nodes built, walked and freed", results.Group(uint64(s.List)))},
		{Name: "tree", Tool: "gcc", Source: "tree", Args: []string{strconv.Itoa(s.Tree)},
			About: fmt.Sprintf("testdata/programs/tree.c: inserts %s pseudo-random keys into a binary search tree, looks each up and one absent key per key, checksums and frees it", results.Group(uint64(s.Tree))),
			Brief: fmt.Sprintf("testdata/programs/tree.c: %s keys inserted into a binary search tree, looked up, freed", results.Group(uint64(s.Tree)))},
		{Name: "ls", Tool: "ls", Needs: "/usr/include", Args: []string{"-R", "/usr/include"},
			About: "lists /usr/include recursively: directory reads, stat calls, sorting and formatting in C",
			Brief: "lists /usr/include recursively"},
		{Name: "python3", Tool: "python3", Args: []string{"-c", py}, RealExe: []string{"-c", "import sys; print(sys.executable)"},
			About: fmt.Sprintf("the interpreter's start, then a loop of %s additions of squares", results.Group(uint64(s.Python))),
			Brief: fmt.Sprintf("the interpreter's start, then a loop of %s additions", results.Group(uint64(s.Python)))},
		{Name: "perl", Tool: "perl", Args: []string{"-e", pl}, RealExe: []string{"-e", "print $^X"},
			About: fmt.Sprintf("the interpreter's start, then a loop of %s additions of squares", results.Group(uint64(s.Perl))),
			Brief: fmt.Sprintf("the interpreter's start, then a loop of %s additions", results.Group(uint64(s.Perl)))},
	}
}

// Names returns the benchmark programs' names, in the order they run.
func Names() []string {
	var ns []string
	for _, p := range List(Full()) {
		ns = append(ns, p.Name)
	}
	return ns
}

// Prepared is a program made ready to run, or the reason it cannot run
// on this machine.
type Prepared struct {
	// Path is the executable to run: the tool found on PATH, the
	// interpreter behind a wrapper script, or the C program built.
	Path string
	// Script is Path's #! line when Path is a script, else "".
	Script string
	// Skipped says why the program cannot run here, "" when it can.
	Skipped string
}

// Prepare finds or builds p's executable. A program whose tool is not on
// PATH, or whose Needs path does not exist, is skipped: Prepare returns
// it with Skipped saying so, and a nil error. A C program is built in the
// directory root (the repository) with gcc GCCFlags() -I ROOT/include,
// from ROOT/testdata/programs/SOURCE.c, into workDir/NAME; a failed build
// is an error. When the tool on PATH is a #! script and p has RealExe,
// Path is the interpreter that the tool says it is, if that is a regular
// file and no script itself; otherwise Path stays the script.
func (p Program) Prepare(ctx context.Context, root, workDir string) (Prepared, error) {
	tool, err := exec.LookPath(p.Tool)
	if err != nil {
		return Prepared{Skipped: p.Tool + " not found on PATH"}, nil
	}
	if p.Needs != "" {
		if _, err := os.Stat(p.Needs); err != nil {
			return Prepared{Skipped: p.Needs + " does not exist"}, nil
		}
	}
	if p.Source == "" {
		prep := Prepared{Path: tool, Script: shebang(tool)}
		if prep.Script != "" && p.RealExe != nil {
			if real := realExe(ctx, tool, p.RealExe); real != "" {
				prep.Path, prep.Script = real, ""
			}
		}
		return prep, nil
	}
	out := filepath.Join(workDir, p.Name)
	args := append(GCCFlags(), "-I", filepath.Join(root, "include"), "-o", out,
		filepath.Join(root, "testdata", "programs", p.Source+".c"))
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return Prepared{}, fmt.Errorf("%s: build: gcc %s: %v\n%s", p.Name, strings.Join(args, " "), err, msg)
	}
	return Prepared{Path: out}, nil
}

// realExe runs the script tool with args and returns the path it prints,
// when that is a regular file and no script; else "".
func realExe(ctx context.Context, tool string, args []string) string {
	out, err := exec.CommandContext(ctx, tool, args...).Output()
	if err != nil {
		return ""
	}
	real := strings.TrimSpace(string(out))
	if real == "" || shebang(real) != "" {
		return ""
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return real
}

// shebang returns the first line of the file at path when it is a #!
// script, else "".
func shebang(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	return strings.TrimSpace(line)
}
