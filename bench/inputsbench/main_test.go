package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

func TestParseLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"2000,20000", []int{2000, 20000}, true},
		{" 5 ", []int{5}, true},
		{"0", nil, false},
		{"1,x", nil, false},
		{"", nil, false},
	} {
		got, err := parseLines(c.in)
		if (err == nil) != c.ok || len(got) != len(c.want) {
			t.Errorf("parseLines(%q) = %v, %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("parseLines(%q) = %v, want %v", c.in, got, c.want)
			}
		}
	}
}

func TestExpressions(t *testing.T) {
	data := expressions(5)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 5 || lines[4] != "(7 / (3 - 3))" {
		t.Errorf("expressions(5) = %q", data)
	}
	if bytes.Contains(data[:len(data)-14], []byte("/ 0")) {
		t.Errorf("an early line divides by zero: %q", data)
	}
}

func TestReport(t *testing.T) {
	rep := &report{machine: results.Machine{CPU: "cpu", Cores: 2, Memory: "1 GiB", Kernel: "6", Load: "0 0 0"}, commit: "abc",
		sizes: []measurement{{lines: 2000, inputBytes: 57000, instances: 4700000, read: time.Second, load: 2 * time.Second,
			pass: 4 * time.Second, rss: 560e6, der: 3, cinf: 56000, ainf: 56000}}}
	md := rep.markdown()
	for _, want := range []string{section.Begin(), "| 2000 lines (57,000 bytes) | 4,700,000 | 1.00 s | 2.00 s | 4.00 s | 1.18 M | 0.56 GB | 3 / 56000 / 56000 |", section.End()} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
