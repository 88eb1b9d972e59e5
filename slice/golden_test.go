package slice_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// golden is one hand-worked criterion of a program in
// testdata/programs/slice: the lines of the program's file its slice holds.
type golden struct {
	name  string
	line  int  // the criterion's line
	crash bool // slice from the crash, not the line
	want  map[int]bool
}

var markerRE = regexp.MustCompile(`//@\s+(.*)$`)

// readGoldens parses the //@ markers of a slice test program and its
// // flags: line.
func readGoldens(t *testing.T, src string) (flags []string, gs []*golden) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byName := map[string]*golden{}
	ins := map[int][]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if rest, ok := strings.CutPrefix(strings.TrimSpace(text), "// flags:"); ok && flags == nil {
			flags = strings.Fields(rest)
			continue
		}
		m := markerRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[1])
		crash := false
		for _, w := range fields {
			if w == "crash" {
				crash = true
			}
		}
		for _, w := range fields {
			switch {
			case strings.HasPrefix(w, "crit="):
				g := &golden{name: w[5:], line: n, crash: crash, want: map[int]bool{n: true}}
				byName[g.name] = g
				gs = append(gs, g)
			case strings.HasPrefix(w, "in="):
				ins[n] = append(ins[n], strings.Split(w[3:], ",")...)
			case w == "crash":
			default:
				t.Fatalf("%s:%d: unknown marker word %q", src, n, w)
			}
		}
	}
	for n, names := range ins {
		for _, name := range names {
			g := byName[name]
			if g == nil {
				t.Fatalf("%s:%d: in=%s names no criterion", src, n, name)
			}
			g.want[n] = true
		}
	}
	return flags, gs
}

// sliceLines returns the lines of file base that the slice holds.
func sliceLines(t *testing.T, res *slice.Result, base string) map[int]bool {
	t.Helper()
	got := map[int]bool{}
	err := res.Rows(nil, func(row slice.Row) error {
		if filepath.Base(row.Loc.File) == base && row.Loc.Line != 0 {
			got[int(row.Loc.Line)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func lineList(m map[int]bool) string {
	var ns []int
	for n := range m {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return fmt.Sprint(ns)
}

func loadRun(t *testing.T, trace string) *slice.Run {
	t.Helper()
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestGoldenSlices computes the hand-worked slices of the programs in
// testdata/programs/slice with both algorithms: they must agree with each
// other and with the expected lines.
func TestGoldenSlices(t *testing.T) {
	srcs, err := filepath.Glob(filepath.Join(testprog.Root(t), "testdata", "programs", "slice", "*.c"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no slice programs: %v", err)
	}
	for _, src := range srcs {
		base := filepath.Base(src)
		prog := strings.TrimSuffix(base, ".c")
		t.Run(prog, func(t *testing.T) {
			flags, gs := readGoldens(t, src)
			if len(gs) == 0 {
				t.Fatalf("%s has no //@ crit= marker", base)
			}
			if flags == nil {
				flags = []string{"-g", "-O0", "-fno-omit-frame-pointer", "-pthread"}
			}
			bin := testprog.Build(t, "slice/"+prog, testprog.Flags(flags...))
			run := loadRun(t, testprog.Record(t, bin))
			for _, g := range gs {
				crit := slice.Criterion{Kind: slice.ByLine, File: base, Line: uint32(g.line)}
				if g.crash {
					crit = slice.Criterion{Kind: slice.ByCrash}
				}
				p, err := run.Resolve(crit)
				if err != nil {
					t.Fatalf("%s: %v", g.name, err)
				}
				opt := slice.Options{PruneSaveRestore: strings.HasSuffix(g.name, "p") && prog == "saverestore"}
				var first map[int]bool
				for _, alg := range []slice.Algorithm{slice.Improved, slice.Baseline} {
					opt.Algorithm = alg
					res, err := slice.Slice(run, p, opt)
					if err != nil {
						t.Fatalf("%s %v: %v", g.name, alg, err)
					}
					got := sliceLines(t, res, base)
					if first == nil {
						first = got
						if lineList(got) != lineList(g.want) {
							t.Errorf("%s (%s): slice of %s holds lines %s, want %s", base, g.name, p.Label, lineList(got), lineList(g.want))
						}
					} else if lineList(got) != lineList(first) {
						t.Errorf("%s (%s): %v algorithm gives lines %s, improved %s", base, g.name, alg, lineList(got), lineList(first))
					}
				}
			}
		})
	}
}
