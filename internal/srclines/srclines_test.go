package srclines

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "a.c"), []byte("int x;\n\t  x = 1;  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New(dir)
	for _, tc := range []struct {
		path string
		n    int
		want string
	}{
		{filepath.Join(dir, "src", "a.c"), 2, "x = 1;"}, // the recorded path
		{"/build/elsewhere/src/a.c", 1, "int x;"},       // a suffix under dir
		{"/build/elsewhere/src/a.c", 3, ""},             // past the end
		{"/build/elsewhere/src/a.c", 0, ""},             // no line 0
		{"/nowhere/b.c", 1, ""},                         // unreadable
		{"", 1, ""},                                     // no file
	} {
		if got := c.Line(tc.path, tc.n); got != tc.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.path, tc.n, got, tc.want)
		}
	}
}
