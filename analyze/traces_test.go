package main

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// TestCommittedTraces checks the traces in testdata/traces: each reads
// whole, passes Summarize with every pc described, and holds the events
// its program is recorded for (testdata/traces/README.md).
func TestCommittedTraces(t *testing.T) {
	root := testprog.Root(t)
	dir := filepath.Join(root, "testdata", "traces")
	paths, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	if err != nil || len(paths) < 7 {
		t.Fatalf("found %d traces in %s (%v), want the 7 of its README", len(paths), dir, err)
	}
	// The slicer's programs (testdata/programs/slice) are in slice/.
	slicePaths, err := filepath.Glob(filepath.Join(dir, "slice", "*.trace"))
	if err != nil || len(slicePaths) == 0 {
		t.Fatalf("found %d traces in %s/slice (%v), want those of its README", len(slicePaths), dir, err)
	}
	paths = append(paths, slicePaths...)
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range paths {
		name, _ := filepath.Rel(dir, strings.TrimSuffix(file, ".trace"))
		name = filepath.ToSlash(name) // "list", "slice/loop"
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(string(readme), "`"+name+".trace`") {
				t.Errorf("%s.trace is not described in testdata/traces/README.md", name)
			}
			r, err := schema.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := schema.Summarize(r, nil)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if !r.End().Whole {
				t.Fatalf("not whole: %+v", r.End())
			}
			if s.PCsWithoutInstruction != 0 {
				t.Fatalf("%d pcs have no instruction entry", s.PCsWithoutInstruction)
			}
			prog, _, _ := strings.Cut(path.Base(name), "-") // "specsem-cycle" records specsem
			if r.Header().Program != "./"+prog {
				t.Fatalf("program %q, want ./%s", r.Header().Program, prog)
			}
			checkTrace(t, root, name, file)
		})
	}
}

// checkTrace checks what each program's trace must hold.
func checkTrace(t *testing.T, root, name, path string) {
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var stores, cpoints, marks, threads int
	var signal *schema.Event
	prog, _, _ := strings.Cut(name, "-")
	src := "testdata/programs/" + prog + ".c"
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case schema.KindStore:
			if r.Tables().Locate(ev.PC).File == src {
				stores++
			}
		case schema.KindClientRequest:
			if ev.Num == 1 && ev.Name == "list" {
				cpoints++
			}
			if ev.Num == 2 && ev.Name == "phase-2" {
				marks++
			}
		case schema.KindThreadCreate:
			threads++
		case schema.KindSignal:
			e := *ev
			signal = &e
		}
	}
	if stores == 0 {
		t.Fatalf("no store located in %s", src)
	}
	checkFunctionCode(t, r.Tables())
	switch name {
	case "cpoint":
		if cpoints != 8 || marks != 1 {
			t.Fatalf("%d C-points and %d marks, want 8 and 1", cpoints, marks)
		}
	case "threads":
		if threads != 2 {
			t.Fatalf("%d thread creations, want 2", threads)
		}
	case "wild":
		if signal == nil || signal.Num != 11 || signal.Addr != 0x8 {
			t.Fatalf("signal %+v, want SIGSEGV at address 0x8", signal)
		}
		loc := r.Tables().Locate(signal.PC)
		if want := testprog.Line(t, "wild", "/* FAULT */"); loc.File != src || int(loc.Line) != want {
			t.Fatalf("signal at %s, want %s:%d", loc, src, want)
		}
	}
}

// checkFunctionCode checks that every function of the program's own
// executable has its whole code (Function.code), and that every executed
// instruction with a function that has code has the bytes at its offset in
// that code.
func checkFunctionCode(t *testing.T, tables *schema.Tables) {
	t.Helper()
	var mainFuncs int
	for _, fn := range tables.Functions {
		if m := tables.Modules[fn.ModuleId]; m == nil || !m.Main {
			continue
		}
		mainFuncs++
		if len(fn.Code) == 0 || uint64(len(fn.Code)) != fn.High-fn.Low {
			t.Errorf("function %s [%#x, %#x) of the program: %d code bytes, want %d", fn.Name, fn.Low, fn.High, len(fn.Code), fn.High-fn.Low)
		}
	}
	if mainFuncs == 0 {
		t.Errorf("no function of the program in the tables")
	}
	for pc, in := range tables.Instructions {
		fn := tables.Functions[in.FunctionId]
		if fn == nil || len(fn.Code) == 0 {
			continue
		}
		end := pc - fn.Low + uint64(len(in.Code))
		if pc < fn.Low || end > uint64(len(fn.Code)) || !bytes.Equal(fn.Code[pc-fn.Low:end], in.Code) {
			t.Errorf("instruction %#x (% x) differs from its place in %s's code", pc, in.Code, fn.Name)
		}
	}
}
