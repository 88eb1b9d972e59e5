package critical

import (
	"os"
	"path/filepath"
	"strings"
)

// sources reads source lines from the files a trace names: at the
// recorded path, or else under dir at the longest suffix of that path
// that exists there.
type sources struct {
	dir   string
	files map[string][]string
}

func newSources(dir string) *sources {
	if dir == "" {
		dir = "."
	}
	return &sources{dir: dir, files: make(map[string][]string)}
}

func (c *sources) read(path string) []string {
	try := []string{path}
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := range parts {
		if rest := strings.Join(parts[i:], "/"); rest != "" {
			try = append(try, filepath.Join(c.dir, filepath.FromSlash(rest)))
		}
	}
	for _, p := range try {
		if b, err := os.ReadFile(p); err == nil && len(b) < 16<<20 {
			return strings.Split(string(b), "\n")
		}
	}
	return nil
}

// line returns line n of the file at path, trimmed; "" when unreadable.
func (c *sources) line(path string, n int) string {
	if path == "" || n <= 0 {
		return ""
	}
	lines, ok := c.files[path]
	if !ok {
		lines = c.read(path)
		c.files[path] = lines
	}
	if n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}
