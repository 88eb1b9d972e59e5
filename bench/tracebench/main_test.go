package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func section(body string) string { return beginMarker + "\n" + body + "\n" + endMarker + "\n" }

// TestUpdateResults checks that the tracebench section is created,
// replaced in place, and appended, and that text around it survives.
func TestUpdateResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := updateResults(path, section("one")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if got, want := string(b), "# Benchmark results\n\n"+section("one"); got != want {
		t.Fatalf("new file:\n%s\nwant:\n%s", got, want)
	}

	os.WriteFile(path, []byte("# Results\n\nintro\n\n"+section("one")+"\n## Other\n\nkept\n"), 0o644)
	if err := updateResults(path, section("two")); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if got, want := string(b), "# Results\n\nintro\n\n"+section("two")+"\n## Other\n\nkept\n"; got != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", got, want)
	}

	os.WriteFile(path, []byte("# Results\n\nno section yet\n\n\n"), 0o644)
	if err := updateResults(path, section("three")); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if got, want := string(b), "# Results\n\nno section yet\n\n"+section("three"); got != want {
		t.Fatalf("appended:\n%s\nwant:\n%s", got, want)
	}

	os.WriteFile(path, []byte("# Results\n\n"+endMarker+"\n"), 0o644)
	if err := updateResults(path, section("four")); err == nil || !strings.Contains(err.Error(), "only one") {
		t.Fatalf("one marker: err = %v, want an error", err)
	}
}

// TestMarkdown checks that a smoke run says so and a full run does not.
func TestMarkdown(t *testing.T) {
	res := &result{cfg: config{events: 5_000_000, seed: 1}, machine: describeMachine(), start: time.Now(),
		size: 14_000_000, writeTime: 300 * time.Millisecond, readTime: 150 * time.Millisecond, peakSplit: true}
	md := res.markdown()
	if !strings.HasPrefix(md, beginMarker+"\n") || !strings.HasSuffix(md, endMarker+"\n") {
		t.Errorf("section is not between the markers:\n%s", md)
	}
	for _, want := range []string{"Smoke run", "16.67 M events/s", "33.33 M events/s", "2.800 |", "| met |"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	res.cfg.events = fullEvents
	if md := res.markdown(); strings.Contains(md, "Smoke run") {
		t.Errorf("full run marked as a smoke run:\n%s", md)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 50_000_000: "50,000,000"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}
