package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode"
)

// porcupinePath is the module path of porcupine.
const porcupinePath = "github.com/anishathalye/porcupine"

// linkedVersion returns the version of porcupine this program was built
// with, or "" when the build information does not say.
func linkedVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == porcupinePath {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

// escapeModulePath escapes a module path as the module cache spells it:
// an upper-case letter becomes "!" and the letter in lower case.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// findPorcupine returns the directory of porcupine's module (its sources
// and test_data, read in place) and its version: `go list -m` in the
// repository at root, else the module cache (`go env GOMODCACHE`) at the
// version this program was built with.
func findPorcupine(ctx context.Context, root string) (dir, version string, err error) {
	linked := linkedVersion()
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}\t{{.Version}}", porcupinePath)
	cmd.Dir = root
	out, listErr := cmd.Output()
	if listErr == nil {
		d, v, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
		if d != "" && (linked == "" || v == linked) {
			return d, v, nil
		}
		if linked == "" {
			linked = v
		}
	}
	if linked == "" {
		return "", "", fmt.Errorf("cannot find porcupine's module: go list -m %s: %v", porcupinePath, listErr)
	}
	cmd = exec.CommandContext(ctx, "go", "env", "GOMODCACHE")
	cmd.Dir = root
	out, err = cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("cannot find porcupine's module: go env GOMODCACHE: %w", err)
	}
	dir = filepath.Join(strings.TrimSpace(string(out)), escapeModulePath(porcupinePath)+"@"+linked)
	if _, err := os.Stat(dir); err != nil {
		return "", "", fmt.Errorf("porcupine %s is not in the module cache (run go mod download %s): %w", linked, porcupinePath, err)
	}
	return dir, linked, nil
}

// expectations are the verdicts porcupine's own tests expect, by the
// history's path under test_data ("jepsen/etcd_002.log", "kv/c01-ok.txt"):
// true for linearizable.
type expectations struct {
	verdict map[string]bool
	// conflicts name histories that two tests expect differently.
	conflicts []string
}

// readExpectations reads the expected verdicts from porcupine's
// porcupine_test.go: every call checkJepsen(t, N, true|false) and
// checkKv(t, "NAME", true|false, ...).
func readExpectations(path string) (*expectations, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("porcupine's expected verdicts: %w", err)
	}
	return parseExpectations(string(data))
}

// parseExpectations reads the expected verdicts from the text of
// porcupine_test.go.
func parseExpectations(src string) (*expectations, error) {
	checkJepsen := regexp.MustCompile(`checkJepsen\(t,\s*(\d+),\s*(true|false)\)`)
	checkKv := regexp.MustCompile(`checkKv\(t,\s*"([^"]+)",\s*(true|false)\s*,`)
	e := &expectations{verdict: make(map[string]bool)}
	add := func(name string, ok bool) {
		if old, seen := e.verdict[name]; seen && old != ok {
			e.conflicts = append(e.conflicts, name)
		}
		e.verdict[name] = ok
	}
	for _, m := range checkJepsen.FindAllStringSubmatch(src, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("porcupine's expected verdicts: bad log number in %q", m[0])
		}
		add(fmt.Sprintf("jepsen/etcd_%03d.log", n), m[2] == "true")
	}
	for _, m := range checkKv.FindAllStringSubmatch(src, -1) {
		add("kv/"+m[1]+".txt", m[2] == "true")
	}
	if len(e.verdict) == 0 {
		return nil, errors.New("porcupine's expected verdicts: no checkJepsen or checkKv call found in porcupine_test.go")
	}
	return e, nil
}
