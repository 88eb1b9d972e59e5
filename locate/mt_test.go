package locate

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// mtLimit bounds the statements reported for an mtlist fault. The paper's
// Table 3 has no multithreaded structure; 3 is what its sorted list
// (ordlist, 2) allows plus one.
const mtLimit = 3

// TestMultithreadedSuite runs the suite's multithreaded program,
// testdata/programs/ds/mtlist.c: four worker threads insert into and
// delete from one sorted list under a mutex, with C-points in whichever
// thread runs an operation, nodes allocated in every thread and thread
// switches between the C-points. The correct build passes every C-point;
// for each fault, fault location reports the faulty line first, and its
// store was made by the thread the program says fired the fault.
func TestMultithreadedSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("records 4 multithreaded programs")
	}
	const name = "mtlist"
	t.Run("correct", func(t *testing.T) {
		t.Parallel()
		bin := testprog.Build(t, "ds/"+name)
		ses := traceSession(t, name, testprog.Record(t, bin))
		points := 0
		threads := map[int]bool{}
		ses.Check(func(r PointResult) bool {
			points++
			threads[int(r.Point.Thread)] = true
			if len(r.Violations) > 0 {
				t.Errorf("C-point %d (%s, thread %d): %d violations, first %s", points, r.Point.Label, r.Point.Thread, len(r.Violations), r.Violations[0].inc)
				return false
			}
			return true
		})
		if points < 800 {
			t.Errorf("only %d C-points", points)
		}
		// The main thread (1) and the workers 2-5 (the end of the run
		// has thread 0).
		for th := 1; th <= 5; th++ {
			if !threads[th] {
				t.Errorf("no C-point in thread %d (%v)", th, threads)
			}
		}
		if n := ses.run.Threads(); n != 5 {
			t.Errorf("%d threads changed the graph, want 5", n)
		}
	})
	fired := regexp.MustCompile(`FAULT (\d+) fired at op (\d+) in thread (\d+)`)
	for _, k := range faults(t, name) {
		t.Run(fmt.Sprintf("FAULT=%d", k), func(t *testing.T) {
			t.Parallel()
			line := testprog.Line(t, "ds/"+name, fmt.Sprintf("/* FAULT %d */", k))
			bin := testprog.Build(t, "ds/"+name, testprog.Flags(fmt.Sprintf("-DFAULT=%d", k)))
			trace, _, stderr := testprog.RecordOutputs(t, bin)
			m := fired.FindStringSubmatch(stderr)
			if m == nil || m[1] != strconv.Itoa(k) {
				t.Fatalf("the fault did not fire; stderr:\n%s", stderr)
			}
			thread, _ := strconv.Atoi(m[3])
			ses := traceSession(t, name, trace)
			res, err := ses.Locate()
			if err != nil {
				t.Fatalf("locate: %v", err)
			}
			lines := faultLines(res)
			if len(lines) == 0 || lines[0] != line {
				t.Errorf("faulty line %d not ranked first in %v", line, lines)
			}
			if len(lines) > mtLimit {
				t.Errorf("%d statements reported %v, want at most %d", len(lines), lines, mtLimit)
			}
			if len(res.Pending) > 0 {
				t.Errorf("%d inconsistencies still pending at the start", len(res.Pending))
			}
			if int(res.Point.Thread) != thread {
				t.Errorf("first violated C-point in thread %d, the fault fired in thread %d (%s)", res.Point.Thread, thread, m[0])
			}
			for _, f := range res.Faults {
				if int(f.Line) != line {
					continue
				}
				for _, op := range f.Ops {
					if int(op.Thread) != thread {
						t.Errorf("the faulty store (ts %d) has thread %d, the program says %s", op.TS, op.Thread, m[0])
					}
				}
				if len(f.Ops) == 0 {
					t.Errorf("line %d has no ops", line)
				}
			}
		})
	}
}
