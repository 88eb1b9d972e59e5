package histfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

// porcupineData is where porcupine's test histories are when its module
// is in the module cache. They are read in place, never copied here.
func porcupineData(t *testing.T) string {
	dir := filepath.Join(os.Getenv("HOME"), "go/pkg/mod/github.com/anishathalye/porcupine@v1.3.1/test_data")
	if gm := os.Getenv("GOMODCACHE"); gm != "" {
		dir = filepath.Join(gm, "github.com/anishathalye/porcupine@v1.3.1/test_data")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("porcupine's test data is not in the module cache: %v", err)
	}
	return dir
}

// countStatus counts h's operations by status.
func countStatus(h *lin.History) map[lin.Status]int {
	n := make(map[lin.Status]int)
	for i := range h.Ops {
		n[h.Ops[i].Status]++
	}
	return n
}

// TestPorcupineEtcdLogs parses porcupine's Jepsen etcd logs and checks
// the numbers of operations against counts of the events' words.
func TestPorcupineEtcdLogs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(porcupineData(t), "jepsen", "etcd_*.log"))
	if len(files) == 0 {
		t.Skip("no etcd logs")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// One log is empty, which says nothing of its format.
		if f, err := Detect(data); len(data) > 0 && (err != nil || f != EtcdLog) {
			t.Errorf("%s: detected as %q, %v", path, f, err)
		}
		h, _, err := Parse(path, data, EtcdLog)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		s := string(data)
		invokes := strings.Count(s, ":invoke")
		oks, fails, infos := strings.Count(s, ":ok"), strings.Count(s, ":fail"), strings.Count(s, ":info")
		timedOut := strings.Count(s, ":timed-out")
		n := countStatus(h)
		// No write fails in these logs, so nothing is dropped.
		if len(h.Ops) != invokes || h.Dropped != 0 {
			t.Errorf("%s: %d operations (%d dropped), want %d", path, len(h.Ops), h.Dropped, invokes)
		}
		if n[lin.Info] != infos {
			t.Errorf("%s: %d info operations, want %d", path, n[lin.Info], infos)
		}
		if n[lin.Unknown] != timedOut-infos { // reads that failed with :timed-out
			t.Errorf("%s: %d unknown operations, want %d", path, n[lin.Unknown], timedOut-infos)
		}
		if n[lin.Pending] != invokes-oks-fails-infos {
			t.Errorf("%s: %d pending operations, want %d", path, n[lin.Pending], invokes-oks-fails-infos)
		}
		if n[lin.OK] != oks+fails-(timedOut-infos) {
			t.Errorf("%s: %d ok operations, want %d", path, n[lin.OK], oks+fails-(timedOut-infos))
		}
		if err := roundTrip(h, false); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestPorcupineKV parses porcupine's key-value histories (Jepsen EDN).
func TestPorcupineKV(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(porcupineData(t), "kv", "*.txt"))
	if len(files) == 0 {
		t.Skip("no key-value histories")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, f, err := Parse(path, data, "")
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if f != EDN {
			t.Errorf("%s: read as %q", path, f)
		}
		s := string(data)
		invokes, oks, fails := strings.Count(s, ":type :invoke"), strings.Count(s, ":type :ok"), strings.Count(s, ":type :fail")
		n := countStatus(h)
		if len(h.Ops) != invokes-fails || h.Dropped != fails {
			t.Errorf("%s: %d operations, %d dropped; want %d, %d", path, len(h.Ops), h.Dropped, invokes-fails, fails)
		}
		if n[lin.OK] != oks {
			t.Errorf("%s: %d ok operations, want %d", path, n[lin.OK], oks)
		}
		for i := range h.Ops {
			if o := &h.Ops[i]; o.Key.Kind != lin.String {
				t.Errorf("%s: operation %s has key %s", path, o.Source, o.Key)
				break
			}
		}
		if err := roundTrip(h, len(h.Ops) <= 1000); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
