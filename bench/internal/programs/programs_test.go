package programs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// TestSizes checks the named sizes: all positive, small ones smaller.
func TestSizes(t *testing.T) {
	full, small := Full(), Small()
	if full != (Sizes{List: 100_000, Tree: 150_000, Python: 100_000, Perl: 300_000}) {
		t.Errorf("full sizes = %+v", full)
	}
	if small != (Sizes{List: 10_000, Tree: 15_000, Python: 10_000, Perl: 30_000}) {
		t.Errorf("small sizes = %+v", small)
	}
	f, s := reflect.ValueOf(full), reflect.ValueOf(small)
	for i := range f.NumField() {
		name := f.Type().Field(i).Name
		if s.Field(i).Int() <= 0 || s.Field(i).Int() >= f.Field(i).Int() {
			t.Errorf("%s: small %d, full %d; want 0 < small < full", name, s.Field(i).Int(), f.Field(i).Int())
		}
	}
	if got, ok := Named("full"); !ok || got != full {
		t.Errorf(`Named("full") = %+v, %v`, got, ok)
	}
	if got, ok := Named("small"); !ok || got != small {
		t.Errorf(`Named("small") = %+v, %v`, got, ok)
	}
	if _, ok := Named("huge"); ok {
		t.Error(`Named("huge") found sizes`)
	}
}

// TestList checks the table: unique names in a fixed order, every field
// a program needs, the sizes in the arguments and descriptions, and the C
// sources present in the repository.
func TestList(t *testing.T) {
	if got, want := Names(), []string{"list", "tree", "ls", "python3", "perl"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	root, err := results.FindRoot("programs test")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range List(Full()) {
		if p.Name == "" || seen[p.Name] {
			t.Errorf("name %q empty or not unique", p.Name)
		}
		seen[p.Name] = true
		if p.Tool == "" || len(p.Args) == 0 || p.About == "" || p.Brief == "" {
			t.Errorf("%s: tool, arguments or descriptions missing: %+v", p.Name, p)
		}
		if strings.HasSuffix(p.About, ".") || strings.HasSuffix(p.Brief, ".") {
			t.Errorf("%s: a description ends with a period", p.Name)
		}
		if p.Source != "" {
			if p.Tool != "gcc" || p.Command() != p.Source {
				t.Errorf("%s: C program with tool %q, command %q", p.Name, p.Tool, p.Command())
			}
			if _, err := os.Stat(filepath.Join(root, "testdata", "programs", p.Source+".c")); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		} else if p.Command() != p.Tool {
			t.Errorf("%s: command %q, want the tool %q", p.Name, p.Command(), p.Tool)
		}
	}
	small := map[string]Program{}
	for _, p := range List(Small()) {
		small[p.Name] = p
	}
	for _, c := range []struct{ name, arg, about string }{
		{"list", "10000", "10,000 malloc'd nodes"},
		{"tree", "15000", "15,000 pseudo-random keys"},
		{"python3", "range(10000)", "10,000 additions of squares"},
		{"perl", "1..30000", "30,000 additions of squares"},
	} {
		p := small[c.name]
		if !strings.Contains(strings.Join(p.Args, " "), c.arg) || !strings.Contains(p.About, c.about) {
			t.Errorf("%s at small sizes: args %q, about %q; want %q and %q", c.name, p.Args, p.About, c.arg, c.about)
		}
	}
	if got := GCCFlags(); !reflect.DeepEqual(got, []string{"-O2", "-g"}) {
		t.Errorf("GCCFlags() = %q", got)
	}
}

// TestPrepareSkips checks that a program whose tool or input is missing
// is skipped, with the reason, and that a tool on PATH is found.
func TestPrepareSkips(t *testing.T) {
	ctx, work := context.Background(), t.TempDir()
	for _, c := range []struct {
		p    Program
		want string
	}{
		{Program{Name: "x", Tool: "no-such-tool-programs"}, "no-such-tool-programs not found on PATH"},
		{Program{Name: "x", Tool: "no-such-gcc-programs", Source: "list"}, "no-such-gcc-programs not found on PATH"},
		{Program{Name: "x", Tool: "sh", Needs: "/no/such/dir"}, "/no/such/dir does not exist"},
	} {
		got, err := c.p.Prepare(ctx, "/no/root", work)
		if err != nil {
			t.Errorf("Prepare(%+v): %v", c.p, err)
		}
		if got != (Prepared{Skipped: c.want}) {
			t.Errorf("Prepare(%+v) = %+v, want skipped %q", c.p, got, c.want)
		}
	}
	if _, err := exec.LookPath("sh"); err == nil {
		got, err := Program{Name: "sh", Tool: "sh", Needs: "/"}.Prepare(ctx, "/no/root", work)
		if err != nil || got.Skipped != "" || !filepath.IsAbs(got.Path) {
			t.Errorf("Prepare(sh) = %+v, %v", got, err)
		}
	}
}

// TestPrepareScript checks the wrapper script on PATH: run as it is
// without RealExe, or when what it names is no regular file or a script
// itself; replaced by the executable it names otherwise.
func TestPrepareScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	shAbs, err := filepath.Abs(sh)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const line = "#!/bin/sh"
	script := line + "\ncase \"$1\" in\n--real) echo " + shAbs + ";;\n--none) echo /no/such/interpreter;;\n--script) echo \"$0\";;\nesac\n"
	wrapper := filepath.Join(dir, "wrapper")
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, c := range []struct {
		realExe []string
		want    Prepared
	}{
		{nil, Prepared{Path: wrapper, Script: line}},
		{[]string{"--real"}, Prepared{Path: shAbs}},
		{[]string{"--none"}, Prepared{Path: wrapper, Script: line}},
		{[]string{"--script"}, Prepared{Path: wrapper, Script: line}},
		{[]string{"--silent"}, Prepared{Path: wrapper, Script: line}},
	} {
		p := Program{Name: "wrapper", Tool: "wrapper", RealExe: c.realExe}
		got, err := p.Prepare(context.Background(), "/no/root", dir)
		if err != nil || got != c.want {
			t.Errorf("RealExe %q: Prepare = %+v, %v; want %+v", c.realExe, got, err, c.want)
		}
	}
}

// TestPrepareBuild builds list.c with gcc, and fails on a missing source.
func TestPrepareBuild(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed")
	}
	root, err := results.FindRoot("programs test")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	got, err := List(Small())[0].Prepare(context.Background(), root, work)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(work, "list"); got != (Prepared{Path: want}) {
		t.Errorf("Prepare(list) = %+v, want path %s", got, want)
	}
	if st, err := os.Stat(got.Path); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("built list: %v, %v", st, err)
	}
	_, err = Program{Name: "bad", Tool: "gcc", Source: "no_such_program"}.Prepare(context.Background(), root, work)
	if err == nil || !strings.HasPrefix(err.Error(), "bad: build: gcc -O2 -g -I ") {
		t.Errorf("Prepare of a missing source: err = %v", err)
	}
}
