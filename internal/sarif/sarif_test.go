package sarif

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestArtifact(t *testing.T) {
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	loc, err := NewLocator(root)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := NewLocator("")
	for _, tc := range []struct {
		l    *Locator
		file string
		want ArtifactLocation
	}{
		{loc, filepath.Join(root, "src", "a.c"), ArtifactLocation{URI: "src/a.c", URIBaseID: SrcRoot}},
		{loc, filepath.Join(root, "src", "..", "b.c"), ArtifactLocation{URI: "b.c", URIBaseID: SrcRoot}},
		{loc, "/usr/include/stdio.h", ArtifactLocation{URI: "file:///usr/include/stdio.h"}},
		{loc, root + "x/c.c", ArtifactLocation{URI: fileURI(root + "x/c.c")}}, // a sibling whose name starts like the root
		{loc, "/tmp/a b#.c", ArtifactLocation{URI: "file:///tmp/a%20b%23.c"}},
		{loc, "lib/d.c", ArtifactLocation{URI: "lib/d.c"}},
		{none, filepath.Join(root, "a.c"), ArtifactLocation{URI: fileURI(filepath.Join(root, "a.c"))}},
	} {
		if got := tc.l.Artifact(tc.file); got != tc.want {
			t.Errorf("Artifact(%q) = %+v, want %+v", tc.file, got, tc.want)
		}
	}
	if l := loc.At("", 0, "", "pc 0x10"); l != nil {
		t.Errorf("At without file or message = %+v, want nil", l)
	}
	if l := loc.At("", 0, "freed here", "pc 0x10"); l == nil || l.PhysicalLocation != nil || l.Message.Text != "freed here (pc 0x10)" {
		t.Errorf("At without a file = %+v", l)
	}
}

func TestRepoRoot(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := RepoRoot(sub); got != sub {
		t.Errorf("RepoRoot without .git = %q, want %q", got, sub)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RepoRoot(sub); got != dir {
		t.Errorf("RepoRoot = %q, want %q (a worktree's .git file)", got, dir)
	}
}

func TestValidate(t *testing.T) {
	loc, _ := NewLocator("/src")
	good := New("t", "v1", []Rule{{ID: "b", ShortDescription: Message{Text: "B"}}, {ID: "a", ShortDescription: Message{Text: "A"}}}, loc)
	good.Add(Result{RuleID: "a", Level: LevelError, Message: Message{Text: "m"},
		Locations:        []Location{*loc.At("/src/x.c", 3, "", "")},
		RelatedLocations: []Location{*loc.At("", 0, "allocated", "pc 0x1"), *loc.At("/src/y.c", 1, "freed", "")},
		CodeFlows:        []CodeFlow{{Message: Message{Text: "f"}, ThreadFlows: []ThreadFlow{{Locations: []ThreadFlowLocation{{Location: *loc.At("/src/x.c", 2, "load", "")}}}}}}})
	good.Add(Result{RuleID: "b", Level: LevelWarning, Message: Message{Text: "n"}})
	b, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(b); err != nil {
		t.Fatalf("Validate(good) = %v\n%s", err, b)
	}
	if r := good.Runs[0]; r.Tool.Driver.Rules[0].ID != "a" || *r.Results[0].RelatedLocations[1].ID != 2 || r.Results[1].Locations == nil {
		t.Errorf("New/Add: rules not sorted, related locations not numbered or nil locations: %s", b)
	}
	for _, tc := range []struct{ name, edit, want string }{
		{"version", `"version":"2.1.0"`, `version is not`},
		{"rule id", `"ruleId":"b"`, `rule id "zz"`},
		{"level", `"level":"warning"`, `level "zz"`},
		{"message", `"text":"n"`, `no message text`},
		{"uri", `"uri":"x.c"`, `without an artifact URI`},
		{"line", `"startLine":3`, `start line of 1`},
		{"driver", `"name":"t"`, `no tool.driver.name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, _, _ := strings.Cut(tc.edit, ":")
			bad := strings.Replace(string(b), tc.edit, k+`:"zz"`, 1)
			switch tc.name {
			case "message", "uri", "driver":
				bad = strings.Replace(string(b), tc.edit, k+`:""`, 1)
			case "line":
				bad = strings.Replace(string(b), tc.edit, k+`:0`, 1)
			}
			if bad == string(b) {
				t.Fatalf("%s not in the log", tc.edit)
			}
			if err := Validate([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error with %q", err, tc.want)
			}
		})
	}
	if err := Validate([]byte(`{"version":"2.1.0","runs":[]}`)); err == nil {
		t.Error("Validate accepted a log without runs")
	}
}
