package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFaultLine(t *testing.T) {
	patch := []byte(`a description

--- a/src/x.c
+++ b/src/x.c
@@ -10,7 +12,8 @@
 one
-two
+two and a half
+three /* FAULT */
 four
`)
	file, line, err := faultLine(patch)
	if err != nil || file != "src/x.c" || line != 14 {
		t.Fatalf("faultLine = %q, %d, %v; want src/x.c, 14", file, line, err)
	}
	if _, _, err := faultLine([]byte("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")); err == nil {
		t.Fatal("faultLine found a FAULT line in a patch without one")
	}
}

// TestPatches checks that every fault patch of testdata/real marks one
// added line with FAULT and belongs to a program of the benchmark.
func TestPatches(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/real/patches/*.patch")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no patches: %v", err)
	}
	for _, p := range paths {
		m := patchName.FindStringSubmatch(filepath.Base(p))
		if m == nil {
			t.Errorf("%s: not NAME-K.patch", p)
			continue
		}
		if _, ok := lookup(m[1]); !ok {
			t.Errorf("%s: no program %s", p, m[1])
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := faultLine(src); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestWithPoint(t *testing.T) {
	if got := string(withPoint([]byte("a;"), "CPOINT f ENTRY;")); got != "a;\nCPOINT f ENTRY;\n" {
		t.Errorf("withPoint = %q", got)
	}
	if got := string(withPoint([]byte("a;"), "")); got != "a;" {
		t.Errorf("withPoint without a point = %q", got)
	}
}

// TestRealPrograms runs the benchmark's measurements, once each, on the
// builds of testdata/real/get.sh when they are there (make
// bench-locate-real makes them; the test skips without them), and checks
// the acceptance: no violation in the correct builds, the FAULT line
// located among fewer than 5 source lines.
func TestRealPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("records the real programs")
	}
	cfg := config{runs: 1, bin: "../../bin", real: "../../out/real"}
	for _, p := range programs {
		if _, err := os.Stat(filepath.Join(cfg.real, "bin", p.name+"-fault1")); err != nil {
			t.Skipf("no build of %s: run testdata/real/get.sh (%v)", p.name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.bin, "record")); err != nil {
		t.Skipf("no record: make build (%v)", err)
	}
	e, err := newEnv(cfg)
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(e.tmp)
	for _, p := range programs {
		r, err := measure(e, cfg, p)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if !r.ok() {
			t.Errorf("%s: correct build %+v", p.name, r.correct)
			for _, f := range r.faults {
				t.Errorf("%s %d: from the crash %+v; declared %+v", p.name, f.fault.k, f.crash, f.declared)
			}
		}
	}
}
