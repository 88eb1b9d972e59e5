// Package srclines reads lines of the source files a trace names, for
// reports that show the statement they point at: at the recorded path,
// or else under a folder at the longest suffix of that path that exists
// there (a checkout in another place than the build's).
package srclines

import (
	"os"
	"path/filepath"
	"strings"
)

// maxFile is the largest source file read (bigger ones give no lines).
const maxFile = 16 << 20

// Cache reads each file once. It is not safe for concurrent use.
type Cache struct {
	dir   string
	files map[string][]string
}

// New returns a cache that looks under dir ("." when empty) when a
// recorded path is not readable.
func New(dir string) *Cache {
	if dir == "" {
		dir = "."
	}
	return &Cache{dir: dir, files: make(map[string][]string)}
}

func (c *Cache) read(path string) []string {
	try := []string{path}
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := range parts {
		if rest := strings.Join(parts[i:], "/"); rest != "" {
			try = append(try, filepath.Join(c.dir, filepath.FromSlash(rest)))
		}
	}
	for _, p := range try {
		if b, err := os.ReadFile(p); err == nil && len(b) < maxFile {
			return strings.Split(string(b), "\n")
		}
	}
	return nil
}

// Line returns line n (from 1) of the file at path, trimmed; "" when the
// file or the line cannot be read.
func (c *Cache) Line(path string, n int) string {
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
