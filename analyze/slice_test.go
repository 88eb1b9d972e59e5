package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
)

// sliceTrace is the committed trace of testdata/programs/slice/loop.c at
// -O0; line 44 is `int s = sum * 2;` (criterion s of its golden slices).
const sliceTrace = tracesDir + "slice/loop.trace"

// mainStart returns the sequence number of the first BLOCK event of
// loop.c's code in the slice trace: main's start.
func mainStart(t *testing.T) uint64 {
	t.Helper()
	r, err := schema.Open(sliceTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			t.Fatal("no block of loop.c in the trace")
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == schema.KindBlock && strings.HasSuffix(r.Tables().Locate(ev.PC).File, "/loop.c") {
			return ev.Seq
		}
	}
}

// TestSliceText checks analyze slice's text output on the loop trace
// against golden files: the whole slice, data dependences only, depth 2,
// a region that starts at main, and the baseline algorithm, which must
// print what the improved one prints.
func TestSliceText(t *testing.T) {
	from := itoa(int(mainStart(t)))
	base := []string{"slice", "--format", "text", "--criterion", "loop.c:44"}
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"slice_loop.golden", nil},
		{"slice_loop_data.golden", []string{"--data-only"}},
		{"slice_loop_depth2.golden", []string{"--depth", "2"}},
		{"slice_loop_region.golden", []string{"--region", from + ".."}},
		{"slice_loop_rax.golden", []string{"--reg", "eax", "--data-only"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			args := append(append(append([]string(nil), base...), tc.args...), sliceTrace)
			out, errOut, status := runAnalyze(t, args...)
			if status != 0 || errOut != "" {
				t.Fatalf("%v: status %d, stderr %q", args, status, errOut)
			}
			checkGolden(t, goldenPath(t, tc.golden), out)

			// The baseline algorithm computes the same slice.
			bargs := append(append([]string(nil), args[:len(args)-1]...), "--algorithm", "baseline", sliceTrace)
			bout, errOut, status := runAnalyze(t, bargs...)
			if status != 0 || errOut != "" {
				t.Fatalf("%v: status %d, stderr %q", bargs, status, errOut)
			}
			if want := strings.Replace(out, "(improved algorithm)", "(baseline algorithm)", 1); bout != want {
				t.Errorf("baseline algorithm:\n%s\nimproved:\n%s", bout, out)
			}
		})
	}
}

// TestSliceSquash checks the squashed text view and --full on the list
// trace against golden files: from list.c:103 (the list_sum call), the
// instances of malloc and the loader's lazy binding are counted at the
// malloc call (list.c:40), the loader's before main apart; --full lists
// every function without source lines instead.
func TestSliceSquash(t *testing.T) {
	base := []string{"slice", "--format", "text", "--criterion", "list.c:103", tracesDir + "list.trace"}
	for _, tc := range []struct {
		golden string
		args   []string
		want   []string
	}{
		{"slice_list.golden", nil, []string{"\n  testdata/programs/list.c:40 ", "list_append  (+", "malloc ", "\n(before main / no program caller): ", "\nsquashed: "}},
		{"slice_list_full.golden", []string{"--full"}, []string{"\nwithout source lines: ", "  malloc\n"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			args := append(append(append([]string(nil), base[:len(base)-1]...), tc.args...), base[len(base)-1])
			out, errOut, status := runAnalyze(t, args...)
			if status != 0 || errOut != "" {
				t.Fatalf("%v: status %d, stderr %q", args, status, errOut)
			}
			checkGolden(t, goldenPath(t, tc.golden), out)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%v: the output lacks %q:\n%s", args, w, out)
				}
			}
		})
	}
}

// TestSliceTextOutput checks the text output's shape: the criterion's
// line alone holds instances of loop.c:44, the region keeps the slice
// inside main, and -o writes the file stdout would get.
func TestSliceTextOutput(t *testing.T) {
	out, _, status := runAnalyze(t, "slice", "--format", "text", "--criterion", "loop.c:44", sliceTrace)
	if status != 0 || !strings.HasPrefix(out, "slice of loop.c:44#1 (improved algorithm): ") ||
		!strings.Contains(out, "\n  testdata/programs/slice/loop.c:44 ") {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
	region, _, _ := runAnalyze(t, "slice", "--format", "text", "--criterion", "loop.c:44", "--region", itoa(int(mainStart(t)))+"..", sliceTrace)
	if strings.Contains(region, "without source lines") || strings.Contains(region, "ld-linux") {
		t.Errorf("a region from main's start holds code outside main:\n%s", region)
	}
	path := filepath.Join(t.TempDir(), "slice.txt")
	fout, errOut, status := runAnalyze(t, "slice", "--format", "text", "--criterion", "loop.c:44", "-o", path, sliceTrace)
	if status != 0 || fout != "" || errOut != "" {
		t.Fatalf("-o: status %d, stdout %q, stderr %q", status, fout, errOut)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != out {
		t.Errorf("-o %s holds %q (%v), want what stdout gets", path, b, err)
	}
}

// TestSliceTables checks that --format arrow and parquet write Arrow IPC
// ("ARROW1" at both ends) and Parquet ("PAR1" at both ends) files, with -o
// and on stdout, and the same bytes both ways.
func TestSliceTables(t *testing.T) {
	for _, tc := range []struct{ format, magic string }{
		{"arrow", "ARROW1"},
		{"parquet", "PAR1"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slice."+tc.format)
			out, errOut, status := runAnalyze(t, "slice", "--criterion", "loop.c:44", "--format", tc.format, "-o", path, sliceTrace)
			if status != 0 || out != "" || errOut != "" {
				t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m := []byte(tc.magic)
			if !bytes.HasPrefix(b, m) || !bytes.HasSuffix(b, m) {
				t.Fatalf("%s: %d bytes, not starting and ending with %q", path, len(b), m)
			}
			out, errOut, status = runAnalyze(t, "slice", "--criterion", "loop.c:44", "--format", tc.format, sliceTrace)
			if status != 0 || errOut != "" {
				t.Fatalf("stdout: status %d, stderr %q", status, errOut)
			}
			if out != string(b) {
				t.Errorf("stdout gets %d bytes, -o wrote %d different ones", len(out), len(b))
			}
		})
	}
}

// TestSliceThread: --thread keeps a thread's rows; a thread that did not
// run gives an empty slice.
func TestSliceThread(t *testing.T) {
	all, _, _ := runAnalyze(t, "slice", "--format", "text", "--criterion", "loop.c:44", sliceTrace)
	one, errOut, status := runAnalyze(t, "slice", "--format", "text", "--criterion", "loop.c:44", "--thread", "1", sliceTrace)
	if status != 0 || errOut != "" || one != all {
		t.Errorf("--thread 1 of a one-thread run: status %d, stderr %q, output differs:\n%s", status, errOut, one)
	}
	none, errOut, status := runAnalyze(t, "slice", "--format", "text", "--criterion", "loop.c:44", "--thread", "99", sliceTrace)
	if status != 0 || errOut != "" || none != "slice of loop.c:44#1 (improved algorithm): 0 instances, 0 source lines\n" {
		t.Errorf("--thread 99: status %d, stderr %q, output %q", status, errOut, none)
	}
}

// TestSliceStats: --stats prints one line of statistics on stderr.
func TestSliceStats(t *testing.T) {
	_, errOut, status := runAnalyze(t, "slice", "--format", "text", "--stats", "--criterion", "loop.c:44", sliceTrace)
	if status != 0 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "analyze: slice: ") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

// TestSliceErrors: each mistake is one line on stderr starting with
// "analyze: ", nothing on stdout, and exit status 2.
func TestSliceErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.trace")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a trace\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	// A real trace with bytes overwritten in its events.
	trace, err := os.ReadFile(sliceTrace)
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.trace")
	copy(trace[len(trace)*3/4:], "GARBAGE GARBAGE GARBAGE GARBAGE")
	if err := os.WriteFile(damaged, trace, 0o644); err != nil {
		t.Fatal(err)
	}
	crit := []string{"--criterion", "loop.c:44"}
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{[]string{sliceTrace}, "missing --criterion"},
		{append(crit, "--format", "arrow", "--full", "-o", filepath.Join(dir, "x.arrow"), sliceTrace), "--full applies to --format text"},
		{[]string{"--criterion", "foo", sliceTrace}, `criterion "foo"`},
		{[]string{"--criterion", "x.c:0", sliceTrace}, "is not a line number"},
		{[]string{"--criterion", "x.c:5#0", sliceTrace}, "#K needs a positive"},
		{[]string{"--criterion", "seq:abc", sliceTrace}, "seq:N needs an event number"},
		{[]string{"--criterion", "loop.c:30", sliceTrace}, "the line never ran"},
		{[]string{"--criterion", "loop.c:44#2", sliceTrace}, "the line ran 1 time"},
		{[]string{"--criterion", "nosuch.c:5", sliceTrace}, `no instruction of file "nosuch.c" ran`},
		{[]string{"--criterion", "seq:999999999", sliceTrace}, "event 999999999"},
		{[]string{"--criterion", "crash", sliceTrace}, "did not end by a signal"},
		{append(crit, "--addr", "0x1000", "--reg", "rax", sliceTrace), "--addr and --reg"},
		{append(crit, "--addr", "zz", sliceTrace), `--addr "zz"`},
		{append(crit, "--addr", "0x1000:0", sliceTrace), "size"},
		{append(crit, "--reg", "foo", sliceTrace), `--reg "foo"`},
		{append(crit, "--algorithm", "fast", sliceTrace), "--algorithm"},
		{append(crit, "--format", "xml", sliceTrace), "--format"},
		{append(crit, "--depth", "-1", sliceTrace), "--depth"},
		{append(crit, "--region", "100", sliceTrace), "FROM..TO"},
		{append(crit, "--region", "x#0..", sliceTrace), "#K needs a positive"},
		{append(crit, "--region", "nomark..", sliceTrace), `no marker named "nomark"`},
		{append(crit, "--region", "..nomark", sliceTrace), `no marker named "nomark"`},
		{append(crit, "--region", "10..20", sliceTrace), "after the region's end"},
		{append(crit, "--region", "999999999..", sliceTrace), "before the region's start"},
		{append(crit, "--no-such-flag", sliceTrace), "unknown flag"},
		{crit, "missing trace file"},
		{append(crit, sliceTrace, sliceTrace), "want one trace file"},
		{append(crit, filepath.Join(dir, "missing.trace")), "no such file"},
		{append(crit, garbage), "not an mgtrace trace"},
		{append(crit, damaged), "checksum mismatch"},
		{append(crit, "-o", filepath.Join(dir, "no", "such", "dir", "out.txt"), "--format", "text", sliceTrace), "create output"},
	} {
		args := append([]string{"slice", "--format", "text"}, tc.args...)
		out, errOut, status := runAnalyze(t, args...)
		if status != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "analyze: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: status %d, stdout %q, stderr %q (want one line with %q)", tc.args, status, out, errOut, tc.want)
		}
	}
}
