package results

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Module is the Go module path of the mgtrace repository.
const Module = "github.com/mgtrace/mgtrace"

// FindRoot returns the repository's root: the nearest directory at or
// above the working directory whose go.mod declares Module. tool names the
// benchmark in the error.
func FindRoot(tool string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
				if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "module" && strings.Trim(f[1], "\"`") == Module {
					return dir, nil
				}
			}
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("run %s inside the mgtrace repository: no go.mod of %s at or above %s", tool, Module, wd)
		}
	}
}

// Commit returns the short commit of the repository at root, with
// "+changes" when the tracked files differ from it, or "" when git cannot
// say.
func Commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "+changes"
	}
	return c
}
