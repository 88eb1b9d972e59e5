package main

import (
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

func TestReport(t *testing.T) {
	rep := &report{machine: results.Machine{CPU: "cpu", Cores: 2, Memory: "1 GiB", Kernel: "6", Load: "0 0 0"},
		commit: "abc", ops: 1000, instructions: 1000000, from: 500000, to: 550000, runs: 3,
		ways: []*way{
			{name: "none", times: []float64{1, 2, 1}},
			{name: "whole", args: func(string) []string { return nil }, times: []float64{10, 10, 10}, bytes: 10 << 20},
			{name: "region", args: func(string) []string { return nil }, times: []float64{1.4, 1.4, 1.4}, bytes: 1 << 20},
			{name: "never", args: func(string) []string { return nil }, times: []float64{1.1, 1.1, 1.1}, bytes: 1 << 10},
		}}
	md := rep.markdown()
	for _, want := range []string{section.Begin(), "| whole | 10.00 s | 10.00x | 10.0 MiB |",
		"| region | 1.40 s | 1.40x | 1.0 MiB |", "within the 1.5x target", "1,000,000 instructions", section.End()} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	rep.ways[2].times = []float64{3, 3, 3}
	if !strings.Contains(rep.text(), "over the 1.5x target") {
		t.Errorf("text does not say the target is missed:\n%s", rep.text())
	}
}
