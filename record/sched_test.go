package main

// Tests of interleaving control: record --preempt and --sched-seed on
// testdata/programs/racy.c, two threads that lose increments when a
// thread switch falls between the read and the write of one.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// TestSchedFlagErrors checks that bad --preempt and --sched-seed values
// give one line on stderr and status 2, before anything runs.
func TestSchedFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{[]string{"--preempt", "0"}, `--preempt must be a whole number from 1 to 1000000000, not "0"`},
		{[]string{"--preempt", "-5"}, `not "-5"`},
		{[]string{"--preempt=abc"}, `not "abc"`},
		{[]string{"--preempt", "1.5"}, `not "1.5"`},
		{[]string{"--preempt", "1000000001"}, `not "1000000001"`},
		{[]string{"--preempt", ""}, `not ""`},
		{[]string{"--sched-seed", "-1"}, `--sched-seed must be a whole number from 0 to 18446744073709551615, not "-1"`},
		{[]string{"--sched-seed", "seven"}, `not "seven"`},
		{[]string{"--preempt", "10", "--sched-seed", "18446744073709551616"}, `not "18446744073709551616"`},
	} {
		trace := filepath.Join(t.TempDir(), "x.trace")
		args := append(append([]string{"-o", trace}, tc.args...), "--", "true")
		status, stdout, stderr := runRecord(args...)
		what := strings.Join(tc.args, " ")
		if status != 2 {
			t.Errorf("%s: exit status %d, want 2", what, status)
		}
		oneLine(t, what, stderr)
		if !strings.HasPrefix(stderr, "record: ") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: stderr %q, want a line starting \"record: \" with %q", what, stderr, tc.want)
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q, want nothing", what, stdout)
		}
	}
}

// TestSchedHelp checks that --help explains both flags.
func TestSchedHelp(t *testing.T) {
	t.Parallel()
	status, stdout, _ := runRecord("--help")
	if status != 0 {
		t.Fatalf("--help: exit status %d", status)
	}
	for _, want := range []string{"--preempt N", "--sched-seed S", "fair-sched"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help does not mention %q:\n%s", want, stdout)
		}
	}
}

// stretch is one thread's run between two thread switches.
type stretch struct {
	thread schema.ThreadID
	blocks int
}

// switches reads the trace's THREAD_SWITCH events and the BLOCK events
// between them, as stretches. Stretches without a block (a thread that
// was switched to and ran nothing) are left out, and neighbours of the
// same thread joined.
func switches(t *testing.T, path string) []stretch {
	t.Helper()
	evs, _ := readEvents(t, path)
	var out []stretch
	cur := schema.ThreadID(0)
	for _, e := range evs {
		switch e.Kind {
		case schema.KindThreadSwitch:
			cur = e.TID
		case schema.KindBlock:
			th := cur
			if th == 0 {
				th = e.Thread
			}
			if n := len(out); n > 0 && out[n-1].thread == th {
				out[n-1].blocks++
			} else {
				out = append(out, stretch{th, 1})
			}
		}
	}
	return out
}

var counterLine = regexp.MustCompile(`^counter (\d+)\n$`)

// recordRacy records racy with record's flags and returns the final
// counter and the stretches.
func recordRacy(t *testing.T, probe, bin string, flags ...string) (int, []stretch, string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "racy.trace")
	args := append([]string{"-q", "--probe-dir", probe, "-o", trace}, flags...)
	status, stdout, stderr := runRecord(append(args, "--", bin)...)
	if status != 0 {
		t.Fatalf("record %s racy: exit status %d\n%s", strings.Join(flags, " "), status, stderr)
	}
	m := counterLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("record %s racy: stdout %q, want \"counter N\"", strings.Join(flags, " "), stdout)
	}
	n, _ := strconv.Atoi(m[1])
	return n, switches(t, trace), trace
}

// TestPreemptRacyCounter is the acceptance of --preempt and --sched-seed:
// without them racy's two threads run one after the other (2000); with
// them the seeds give at least two different counts, and a seed recorded
// twice gives the same count and the same thread switches.
func TestPreemptRacyCounter(t *testing.T) {
	if testing.Short() {
		t.Skip("records racy eight times")
	}
	probe := needProbe(t)
	bin := testprog.Build(t, "racy")

	n, sw, _ := recordRacy(t, probe, bin)
	if n != 2000 {
		t.Errorf("without --preempt: counter %d, want 2000 (each thread runs all its increments in one time slice)", n)
	}
	t.Logf("without --preempt: counter %d, %d stretches", n, len(sw))

	counts := map[int]bool{}
	for seed := 1; seed <= 4; seed++ {
		flags := []string{"--preempt", "100", "--sched-seed", strconv.Itoa(seed)}
		n1, sw1, trace := recordRacy(t, probe, bin, flags...)
		counts[n1] = true
		if n1 > 2000 || n1 < 1000 {
			t.Errorf("seed %d: counter %d, want 1000..2000", seed, n1)
		}
		if len(sw1) < 20 {
			t.Errorf("seed %d: %d stretches, want many thread switches with --preempt 100", seed, len(sw1))
		}
		t.Logf("seed %d: counter %d, %d stretches", seed, n1, len(sw1))
		if seed <= 2 {
			n2, sw2, _ := recordRacy(t, probe, bin, flags...)
			if n2 != n1 {
				t.Errorf("seed %d twice: counter %d then %d", seed, n1, n2)
			}
			if a, b := fmt.Sprint(sw1), fmt.Sprint(sw2); a != b {
				t.Errorf("seed %d twice: different thread switches:\n%s\n%s", seed, a, b)
			}
		}
		if seed == 1 {
			r, err := schema.Open(trace)
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, kv := range r.Header().GetSettings() {
				settings[kv.GetKey()] = kv.GetValue()
			}
			r.Close()
			if settings["preempt"] != "100" || settings["sched-seed"] != "1" {
				t.Errorf("the trace's header settings %v do not say preempt 100 and sched-seed 1", settings)
			}
		}
	}
	if len(counts) < 2 {
		t.Errorf("seeds 1-4 gave the counts %v, want at least two different ones", counts)
	}
}
