package reduce

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestSplit checks that each kind of entity joins back to the input.
func TestSplit(t *testing.T) {
	data := []byte("12 + (3/0)\nx\nlast")
	tests := []struct {
		kind string
		want []string
	}{
		{"bytes", strings.Split(string(data), "")},
		{"lines", []string{"12 + (3/0)\n", "x\n", "last"}},
		{"tokens:[0-9]+|[-+*/()]", []string{"12", " ", "+", " ", "(", "3", "/", "0", ")", "\nx\nlast"}},
	}
	for _, tc := range tests {
		got, err := Split(data, tc.kind)
		if err != nil {
			t.Fatalf("Split %s: %v", tc.kind, err)
		}
		var s []string
		for _, e := range got {
			s = append(s, string(e))
		}
		if !reflect.DeepEqual(s, tc.want) || !bytes.Equal(Join(got), data) {
			t.Errorf("Split %s = %q, want %q", tc.kind, s, tc.want)
		}
	}
	for _, bad := range []string{"words", "tokens:", "tokens:("} {
		if _, err := Split(data, bad); err == nil {
			t.Errorf("Split %q: no error", bad)
		}
	}
}

// TestDDMin reduces with a pure test: the failure needs the bytes '<',
// '!' and '>' in this order (as in Zeller and Hildebrandt's HTML example).
func TestDDMin(t *testing.T) {
	input := []byte(`<SELECT NAME="priority" MULTIPLE SIZE=7>!<x>`)
	fails := func(in []byte) bool {
		i := bytes.IndexByte(in, '<')
		j := bytes.IndexByte(in[i+1:], '!')
		return i >= 0 && j >= 0 && bytes.IndexByte(in[i+1+j:], '>') >= 0
	}
	for _, jobs := range []int{1, 4} {
		var calls atomic.Int64
		test := func(_ context.Context, in []byte) (Verdict, error) {
			calls.Add(1)
			if fails(in) {
				return Fails, nil
			}
			return Passes, nil
		}
		ents, _ := Split(input, "bytes")
		res, err := DDMin(context.Background(), Config{Entities: ents, Test: test, Jobs: jobs,
			Progress: func(p Progress) {}})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Input) != "<!>" {
			t.Errorf("jobs %d: reduced to %q, want \"<!>\"", jobs, res.Input)
		}
		if int(calls.Load()) != res.Runs {
			t.Errorf("jobs %d: %d tests made, result says %d", jobs, calls.Load(), res.Runs)
		}
		sum := 1 // the original input
		for _, s := range res.Steps {
			sum += s.Runs
		}
		if sum != res.Runs || res.Steps[len(res.Steps)-1].Outcome != "minimal" || res.Cached == 0 {
			t.Errorf("jobs %d: steps' runs add to %d, total %d, cached %d, steps %+v", jobs, sum, res.Runs, res.Cached, res.Steps)
		}
	}
	_, err := DDMin(context.Background(), Config{Entities: [][]byte{[]byte("a")},
		Test: func(context.Context, []byte) (Verdict, error) { return Passes, nil }})
	if err != ErrNoFailure {
		t.Errorf("a passing input: %v, want ErrNoFailure", err)
	}
}

// TestCalc reduces calc's failing input byte by byte with the exit-status
// oracle (136: SIGFPE) and checks that the result still fails, is much
// smaller, and is 1-minimal: removing any one byte makes it pass.
func TestCalc(t *testing.T) {
	bin := testprog.Build(t, "inputs/calc")
	orig := filepath.Join(testprog.Root(t), "testdata", "programs", "inputs", "calc.failing")
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range [][]string{{bin, "@@"}, {bin, orig}, {bin}} {
		tester, err := NewTester(Runs{Program: prog, Input: orig, Oracle: OracleStatus, Status: 136, Timeout: 10 * time.Second, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := tester.Original(ctx, data); err != nil {
			t.Fatal(err)
		}
		ents, _ := Split(data, "bytes")
		res, err := DDMin(ctx, Config{Entities: ents, Test: tester.Test, Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%q (%s): %d -> %d bytes %q in %d runs", prog, tester.Substitutes(), res.OriginalBytes, res.Bytes, res.Input, res.Runs)
		if v, _ := tester.Test(ctx, res.Input); v != Fails {
			t.Errorf("%q: the reduced input %q does not fail", prog, res.Input)
		}
		if res.Bytes > len(data)/5 {
			t.Errorf("%q: reduced to %d bytes of %d", prog, res.Bytes, len(data))
		}
		for i := range res.Input {
			less := append(append([]byte(nil), res.Input[:i]...), res.Input[i+1:]...)
			if v, _ := tester.Test(ctx, less); v == Fails {
				t.Errorf("%q: %q without byte %d (%q) still fails: not 1-minimal", prog, res.Input, i, less)
			}
		}
	}
}

// TestTesterErrors checks the oracle's refusals.
func TestTesterErrors(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []Runs{
		{Oracle: OracleCrash, Program: []string{"x"}, Dir: dir},
		{Oracle: OracleStatus, Dir: dir},
		{Oracle: OracleCommand, Command: " ", Dir: dir},
		{Oracle: "magic", Dir: dir},
		{Oracle: OracleStatus, Program: []string{"x"}},
	} {
		if _, err := NewTester(r); err == nil {
			t.Errorf("NewTester(%+v): no error", r)
		}
	}
	tester, err := NewTester(Runs{Oracle: OracleCommand, Command: "grep -q boom @@", Input: "in.txt", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tester.Original(context.Background(), []byte("calm")); err == nil {
		t.Errorf("a command that does not fail on the original: no error")
	}
	if v, err := tester.Test(context.Background(), []byte("a boom")); v != Fails || err != nil {
		t.Errorf("command oracle: %v %v, want Fails", v, err)
	}
}

// TestDDMinStops checks that a test's error and a cancelled context stop
// the reduction.
func TestDDMinStops(t *testing.T) {
	ents, _ := Split([]byte("abcdefgh"), "bytes")
	boom := errors.New("boom")
	n := 0
	_, err := DDMin(context.Background(), Config{Entities: ents, Test: func(context.Context, []byte) (Verdict, error) {
		if n++; n > 1 {
			return Passes, boom
		}
		return Fails, nil
	}})
	if !errors.Is(err, boom) {
		t.Errorf("a failing test: %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = DDMin(ctx, Config{Entities: ents, Test: func(context.Context, []byte) (Verdict, error) {
		cancel()
		return Fails, nil
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled search: %v, want context.Canceled", err)
	}
}
