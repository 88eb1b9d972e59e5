package recorder

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestFunctionCode records list, dynamically and statically linked, and
// checks the functions' code in the tables: every function of the program
// and of libc that ran has its whole code, and every executed instruction's
// code bytes (which the probe copies from memory) are the bytes at its
// offset in its function's code (which the recorder reads from the file).
func TestFunctionCode(t *testing.T) {
	t.Parallel()
	needProbe(t)
	for _, tc := range []struct {
		name string
		opts []testprog.Option
	}{
		{"dynamic", nil},
		{"static", []testprog.Option{testprog.Static()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bin := testprog.Build(t, "list", tc.opts...)
			rec := record(t, bin, []string{"20"})
			tr := readTrace(t, rec.trace)
			checkExited(t, rec, tr)
			tables := tr.r.Tables()

			// Every function that ran in list itself or in libc has code.
			ran := map[uint32]bool{}
			for _, in := range tables.Instructions {
				if in.FunctionId != 0 {
					ran[in.FunctionId] = true
				}
			}
			var mainFuncs, libcFuncs int
			sawMain := false
			without := map[string]int{} // functions that ran without code, by module
			for id := range ran {
				fn := tables.Functions[id]
				mod := tables.Modules[fn.ModuleId]
				if mod == nil {
					continue
				}
				if len(fn.Code) == 0 {
					without[filepath.Base(mod.Path)]++
				}
				base := filepath.Base(mod.Path)
				isMain, isLibc := mod.Main, strings.HasPrefix(base, "libc.so")
				if !isMain && !isLibc {
					continue
				}
				if isMain {
					mainFuncs++
					sawMain = sawMain || fn.Name == "main"
				} else {
					libcFuncs++
				}
				if uint64(len(fn.Code)) != fn.High-fn.Low || len(fn.Code) == 0 {
					t.Errorf("function %s of %s [%#x, %#x): %d code bytes, want %d",
						fn.Name, base, fn.Low, fn.High, len(fn.Code), fn.High-fn.Low)
				}
			}
			if mainFuncs == 0 {
				t.Errorf("no function of the program ran")
			}
			if tc.name == "dynamic" && libcFuncs == 0 {
				t.Errorf("no function of libc ran")
			}
			if !sawMain {
				t.Errorf("main of list is not among the functions that ran")
			}

			// Instruction.code == Function.code[pc-low : pc-low+len].
			var checked, mismatched int
			var report []string
			for pc, in := range tables.Instructions {
				fn := tables.Functions[in.FunctionId]
				if fn == nil || len(fn.Code) == 0 {
					continue
				}
				checked++
				if pc < fn.Low || pc+uint64(len(in.Code)) > fn.High {
					mismatched++
					report = append(report, fmt.Sprintf("%#x (%d bytes) outside %s [%#x, %#x)", pc, len(in.Code), fn.Name, fn.Low, fn.High))
					continue
				}
				if got := fn.Code[pc-fn.Low : pc-fn.Low+uint64(len(in.Code))]; !bytes.Equal(got, in.Code) {
					mismatched++
					report = append(report, fmt.Sprintf("%#x in %s+%#x: executed % x, function code % x", pc, fn.Name, pc-fn.Low, in.Code, got))
				}
			}
			if checked == 0 {
				t.Fatalf("no executed instruction lies in a function with code")
			}
			if mismatched > 0 {
				if len(report) > 10 {
					report = report[:10]
				}
				t.Errorf("%d of %d executed instructions differ from their function's code:\n%s", mismatched, checked, strings.Join(report, "\n"))
			}
			t.Logf("%d functions of list, %d of libc ran; %d executed instructions match their function's code; functions without code by module: %v", mainFuncs, libcFuncs, checked, without)
		})
	}
}
