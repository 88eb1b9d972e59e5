package lin_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/lin"
)

// preemptSeeds are the seeds docs/lin.md documents for reaching the
// FAULTY msqueue's non-linearizable interleavings with record --preempt
// 30 and the program's mode free (no schedule, no yields).
var preemptSeeds = []int{1, 2, 3, 4, 5, 6}

// TestPreemptReachesFaults is the acceptance of interleaving control on
// the linearizability programs: the FAULTY msqueue run with no schedule
// and no yields (mode free) is linearizable when recorded plainly (each
// worker runs its operations in one time slice), and recorded with
// --preempt 30 and the documented seeds it is not linearizable for at
// least one seed and linearizable for another. The correct build stays
// linearizable with the same seeds.
func TestPreemptReachesFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("records msqueue ten times")
	}
	const name = "msqueue"
	opsPath := filepath.Join(testprog.Root(t), "testdata", "programs", "lin", name+".lin")
	correct, faulty := buildBoth(t, name)

	verdict := func(bin string, flags ...string) lin.Verdict {
		t.Helper()
		trace, stdout, stderr := testprog.RecordWith(t, flags, bin, "free")
		if !strings.HasPrefix(stdout, name+" ") || !strings.Contains(stdout, " free\n") {
			t.Fatalf("record %s %s free: stdout %q, stderr %q", strings.Join(flags, " "), bin, stdout, stderr)
		}
		results, _, _ := checkTrace(t, trace, opsPath)
		if len(results) != 1 {
			t.Fatalf("record %s: %d histories, want 1", strings.Join(flags, " "), len(results))
		}
		return results[0].Verdict
	}

	if v := verdict(faulty); v != lin.Linearizable {
		t.Errorf("faulty, recorded without --preempt: %s, want linearizable", v)
	}
	got := map[lin.Verdict][]int{}
	for _, seed := range preemptSeeds {
		v := verdict(faulty, "--preempt", "30", "--sched-seed", strconv.Itoa(seed))
		got[v] = append(got[v], seed)
	}
	t.Logf("faulty, --preempt 30: not linearizable with seeds %v, linearizable with %v",
		got[lin.NotLinearizable], got[lin.Linearizable])
	if len(got[lin.NotLinearizable]) == 0 || len(got[lin.Linearizable]) == 0 {
		t.Errorf("faulty, --preempt 30, seeds %v: verdicts %v, want at least one seed not linearizable and one linearizable",
			preemptSeeds, got)
	}
	for _, seed := range preemptSeeds[:3] {
		if v := verdict(correct, "--preempt", "30", "--sched-seed", strconv.Itoa(seed)); v != lin.Linearizable {
			t.Errorf("correct, --preempt 30 --sched-seed %d: %s, want linearizable", seed, v)
		}
	}
}
