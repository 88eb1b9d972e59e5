package tracehist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocExamples parses the operations files that docs/lin.md shows: each
// must parse, except the one whose errors the next block shows.
func TestDocExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "lin.md"))
	if err != nil {
		t.Skipf("no docs/lin.md: %v", err)
	}
	var blocks []string
	parts := strings.Split(string(data), "```")
	for i := 1; i < len(parts); i += 2 {
		blocks = append(blocks, strings.TrimPrefix(parts[i], "\n"))
	}
	files := 0
	for i, b := range blocks {
		if !strings.HasPrefix(b, "model ") {
			continue
		}
		files++
		_, err := ParseOps("queue.lin", []byte(b))
		if err == nil {
			continue
		}
		if i+1 == len(blocks) || err.Error()+"\n" != blocks[i+1] {
			t.Errorf("example %d:\n%s\ndoes not parse:\n%v", files, b, err)
		}
	}
	if files < 5 {
		t.Errorf("found %d examples in docs/lin.md", files)
	}
}
