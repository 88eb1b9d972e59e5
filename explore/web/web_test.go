package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The graph-layout library copied into static/vendor by `make web-vendor`:
// its version as package-lock.json pins it and the SHA-256 of the copy.
// After `make web-vendor` with a new version, update both.
const (
	dagreVersion = "3.1.3"
	dagreSHA256  = "54a503e346f93ca0bb10abe7999587e037262935687aca45eb4e4b0f64bbb578"
)

func TestVendoredDagre(t *testing.T) {
	b, err := fs.ReadFile(Assets(), "vendor/dagre.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != dagreSHA256 {
		t.Errorf("static/vendor/dagre.min.js: SHA-256 %s, recorded %s (run make web-vendor, then update dagreSHA256)", got, dagreSHA256)
	}
	if _, err := fs.Stat(Assets(), "vendor/dagre.LICENSE.txt"); err != nil {
		t.Errorf("the library's licence is not embedded: %v", err)
	}
	var lock struct {
		Packages map[string]struct {
			Version      string            `json:"version"`
			Integrity    string            `json:"integrity"`
			Dependencies map[string]string `json:"dependencies"`
		} `json:"packages"`
	}
	lb, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lb, &lock); err != nil {
		t.Fatalf("package-lock.json: %v", err)
	}
	p, ok := lock.Packages["node_modules/@dagrejs/dagre"]
	if !ok || p.Version != dagreVersion || p.Integrity == "" {
		t.Errorf("package-lock.json pins @dagrejs/dagre %q (integrity %q), want %s with its integrity", p.Version, p.Integrity, dagreVersion)
	}
	if root := lock.Packages[""]; root.Dependencies["@dagrejs/dagre"] != dagreVersion {
		t.Errorf("package-lock.json's root depends on @dagrejs/dagre %q, want exactly %s", root.Dependencies["@dagrejs/dagre"], dagreVersion)
	}
}

// The page loads only embedded files: no scheme, no protocol-relative URL.
func TestNoRemoteReferences(t *testing.T) {
	page, err := fs.ReadFile(Assets(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	ref := regexp.MustCompile(`(?:src|href)="([^"]*)"`)
	refs := ref.FindAllStringSubmatch(string(page), -1)
	if len(refs) < 3 {
		t.Fatalf("index.html references %d files, want the styles, the library and the script", len(refs))
	}
	for _, m := range refs {
		u := m[1]
		if strings.Contains(u, ":") || strings.HasPrefix(u, "//") || !strings.HasPrefix(u, "static/") {
			t.Errorf("index.html references %q: not an embedded file", u)
			continue
		}
		if _, err := fs.Stat(Assets(), strings.TrimPrefix(u, "static/")); err != nil {
			t.Errorf("index.html references %q, which is not embedded", u)
		}
	}
	app, err := fs.ReadFile(Assets(), "app.js")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`fetch\(\s*["'](https?:)?//`).Match(app) {
		t.Error("app.js fetches from another host")
	}
}

// app.js parses (node --check), when Node is installed.
func TestScriptSyntax(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	out, err := exec.Command(node, "--check", filepath.Join("static", "app.js")).CombinedOutput()
	if err != nil {
		t.Errorf("node --check static/app.js: %v\n%s", err, out)
	}
}
