package rules

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/errors")

// TestErrorGolden parses and checks each testdata/errors/*.rules; the
// errors must be those of the .golden file next to it ("ok" when there
// are none).
func TestErrorGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*.rules"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/errors/*.rules")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseAndCheck(filepath.Base(file), src)
			got := "ok\n"
			if err != nil {
				got = err.Error() + "\n"
			}
			if list, ok := err.(Errors); ok {
				checkPositions(t, filepath.Base(file), src, list)
			} else if err != nil {
				t.Errorf("error %T, want Errors", err)
			}
			golden := strings.TrimSuffix(file, ".rules") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("errors of %s:\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}

// checkPositions fails the test for an error outside the file, in
// another file, or out of position order.
func checkPositions(t *testing.T, name string, src []byte, list Errors) {
	t.Helper()
	lines := strings.Split(string(src), "\n")
	for i, e := range list {
		if e.Pos.File != name || e.Msg == "" {
			t.Errorf("error %+v", e)
		}
		if e.Pos.Line < 1 || e.Pos.Line > len(lines) || e.Pos.Col < 1 || e.Pos.Col > len(lines[e.Pos.Line-1])+1 {
			t.Errorf("error %q at %s is outside the file (%d lines)", e.Msg, e.Pos, len(lines))
		}
		if i > 0 && e.Msg != msgTooMany && before(e.Pos, list[i-1].Pos) {
			t.Errorf("error %q at %s comes after %s", e.Msg, e.Pos, list[i-1].Pos)
		}
	}
}
