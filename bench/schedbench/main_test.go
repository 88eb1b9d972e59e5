package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string // fmt of preempt, or "" on error
		wantErr string
	}{
		{nil, "[1000 100 10]", ""},
		{[]string{"-preempt", "5", "-seeds", "3", "-repeat", "2"}, "[5]", ""},
		{[]string{"-preempt", "0"}, "", "-preempt"},
		{[]string{"-preempt", "x,1"}, "", "-preempt"},
		{[]string{"-seeds", "0"}, "", "-seeds"},
		{[]string{"-repeat", "200"}, "", "-repeat"},
		{[]string{"-k", "0"}, "", "-k"},
		{[]string{"extra"}, "", "unexpected argument"},
	} {
		cfg, err := parseArgs(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseArgs(%q): error %v, want one with %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tc.args, err)
			continue
		}
		if got := fmt.Sprint(cfg.preempt); got != tc.want {
			t.Errorf("parseArgs(%q): preempt %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	in := []stretch{{1, 10}, {2, 0}, {1, 5}, {3, 4}, {2, 0}, {3, 1}, {2, 7}}
	got := sequence(normalize(in))
	if want := "t1:15 t3:5 t2:7"; got != want {
		t.Errorf("normalize: %q, want %q", got, want)
	}
	if got := sequence(nil); got != "" {
		t.Errorf("sequence(nil) = %q", got)
	}
}
