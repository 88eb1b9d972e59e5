package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// The section rewriting, the machine description and number grouping are
// tested in bench/internal/results.

// TestMarkdown checks that a smoke run says so and a full run does not,
// and that the section goes into a results file between its markers.
func TestMarkdown(t *testing.T) {
	res := &result{cfg: config{events: 5_000_000, seed: 1}, machine: results.DescribeMachine(), start: time.Now(),
		size: 14_000_000, writeTime: 300 * time.Millisecond, readTime: 150 * time.Millisecond, peakSplit: true}
	md := res.markdown()
	if !strings.HasPrefix(md, section.Begin()+"\n") || !strings.HasSuffix(md, section.End()+"\n") {
		t.Errorf("section is not between the markers:\n%s", md)
	}
	for _, want := range []string{"Smoke run", "16.67 M events/s", "33.33 M events/s", "2.800 |", "| met |", "usable by Go"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	res.cfg.events = fullEvents
	full := res.markdown()
	if strings.Contains(full, "Smoke run") {
		t.Errorf("full run marked as a smoke run:\n%s", full)
	}

	path := filepath.Join(t.TempDir(), "RESULTS.md")
	os.WriteFile(path, []byte("# Results\n\n"+md+"\nafter\n"), 0o644)
	if err := section.Update(path, full); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# Results\n\n"+full+"\nafter\n" {
		t.Errorf("results file after the update:\n%s", b)
	}
}
