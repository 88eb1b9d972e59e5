package histfile

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestDocExamples parses the examples of docs/lin-histories.md: each
// fenced block after a comment "<!-- example FORMAT ops=N -->" must read
// as N operations in FORMAT, with the format detected.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lin-histories.md")
	if err != nil {
		t.Skipf("the documentation is not here: %v", err)
	}
	re := regexp.MustCompile("(?s)<!-- example ([a-z-]+) ops=([0-9]+) -->\n```[a-z]*\n(.*?)```")
	examples := re.FindAllSubmatch(doc, -1)
	if len(examples) < 4 {
		t.Fatalf("found %d examples, want at least 4", len(examples))
	}
	for i, m := range examples {
		want, _ := strconv.Atoi(string(m[2]))
		h, f, err := Parse("example"+strconv.Itoa(i+1), m[3], "")
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if f != Format(m[1]) || len(h.Ops) != want {
			t.Errorf("example %d: %d operations in %q, want %d in %q", i+1, len(h.Ops), f, want, m[1])
		}
	}
}
