// Command tracegen writes a synthetic trace: the events of
// tracetest.Workload (a program walking linked lists on the heap), with
// tables describing its code, a final EXIT event and a footer. It stands in
// for the recorder in `make demo` and gives analysis code a large trace to
// chew on.
//
// Usage:
//
//	tracegen [-n events] [-seed N] -o out.trace
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

const usage = `usage: tracegen [-n events] [-seed N] -o FILE

Writes a synthetic trace of n events (the last one an exit) made by
tracetest.Workload. The same n and seed give the same events.

flags:
`

func main() {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Uint64("n", 2_000_000, "number of `events` to write")
	out := fs.String("o", "", "write the trace to `FILE` (required)")
	seed := fs.Uint64("seed", 1, "workload random `seed`")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(usage)
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			os.Exit(0)
		}
		fail(2, "%v (see tracegen -h)", err)
	}
	switch {
	case fs.NArg() > 0:
		fail(2, "unexpected argument %q (see tracegen -h)", fs.Arg(0))
	case *out == "":
		fail(2, "missing -o FILE (see tracegen -h)")
	case *n == 0:
		fail(2, "-n must be at least 1")
	}
	size, err := generate(*out, *n, *seed)
	if err != nil {
		fail(1, "%v", err)
	}
	fmt.Fprintf(os.Stderr, "tracegen: wrote %s: %d events, %d bytes (%.2f bytes/event)\n",
		*out, *n, size, float64(size)/float64(*n))
}

// fail prints a one-line error and exits with status code.
func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tracegen: "+format+"\n", args...)
	os.Exit(code)
}

// generate writes the trace of n events to path and returns its size.
func generate(path string, n, seed uint64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("create trace: %w", err)
	}
	size, err := write(f, path, n, seed)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", path, cerr)
	}
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	return size, nil
}

func write(f io.Writer, path string, n, seed uint64) (int64, error) {
	bw := bufio.NewWriterSize(f, 1<<20)
	hdr := tracetest.Header("workload")
	hdr.StartTimeUnixNanos = time.Now().UnixNano()
	hdr.Recorder = "mgtrace tracegen (synthetic tracetest.Workload, no program was run)"
	hdr.Settings = []*tracepb.KeyValue{
		{Key: "events", Value: strconv.FormatUint(n, 10)},
		{Key: "seed", Value: strconv.FormatUint(seed, 10)},
	}
	w, err := schema.NewWriter(bw, hdr, schema.WriterOptions{})
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.AddTables(workloadTables()); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	wl := tracetest.NewWorkload(seed)
	var ev schema.Event
	running := schema.ThreadID(1) // the workload starts on thread 1
	w.SetThreadOSID(running, hdr.Pid)
	for i := uint64(1); i < n; i++ { // the exit event is the n-th
		wl.Next(&ev)
		if err := w.Write(&ev); err != nil {
			return 0, fmt.Errorf("write %s: %w", path, err)
		}
		switch ev.Kind {
		case schema.KindThreadSwitch:
			running = ev.TID
		case schema.KindThreadCreate:
			// Kernel tids as a program's threads would get them.
			w.SetThreadOSID(ev.TID, hdr.Pid+uint32(ev.TID)-1)
		}
	}
	if err := w.Write(&schema.Event{Kind: schema.KindExit, Thread: running}); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(&tracepb.ExitStatus{Ended: true}); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return w.Bytes(), nil
}

// workloadTables describes the code tracetest.Workload pretends to run: a
// list walk in the program and an allocator in libc. The addresses mirror
// those in tracetest/workload.go (TestGenerate checks that every pc the
// workload uses has an entry).
func workloadTables() *tracepb.Tables {
	const (
		loop  = 0x40_1230 // the list walk's loop
		alloc = 0x7f00_0040_1000
		brk   = 0x7f00_0012_3456 // the syscall instruction
	)
	t := &tracepb.Tables{
		Modules: []*tracepb.Module{
			{Id: 1, Path: "/tmp/workload", Start: 0x40_0000, End: 0x40_2000, HasDebugInfo: true, Main: true},
			{Id: 2, Path: "/lib/x86_64-linux-gnu/libc.so.6", Start: 0x7f00_0000_0000, End: 0x7f00_0100_0000, Bias: 0x7f00_0000_0000},
		},
		Files: []*tracepb.SourceFile{{Id: 1, Path: "workload.c"}},
		Functions: []*tracepb.Function{
			{Id: 1, Name: "walk", ModuleId: 1, Low: loop - 0x30, High: loop + 0x40, FileId: 1, Line: 20},
			{Id: 2, Name: "__brk", ModuleId: 2, Low: brk - 0x16, High: brk + 0x20},
			{Id: 3, Name: "malloc", ModuleId: 2, Low: alloc, High: alloc + 0x80},
		},
		Types: []*tracepb.StructType{{Name: "node", Size: 16, Kind: "struct", FileId: 1, Line: 8,
			Members: []*tracepb.Member{
				{Name: "val", Offset: 0, Size: 4, TypeName: "int"},
				{Name: "next", Offset: 8, Size: 8, Pointer: true, TypeName: "struct node *", Pointee: "node"},
			}}},
	}
	// An entry for every pc the workload uses, as the recorder writes them;
	// the loop's have line numbers, so that a dump shows file:line.
	for i, off := range []uint64{0, 4, 7, 11, 14, 18, 22, 26, 0x30} {
		t.Instructions = append(t.Instructions, &tracepb.Instruction{
			Pc: loop + off, FunctionId: 1, FileId: 1, Line: uint32(24 + i)})
	}
	for _, off := range []uint64{0, 20, 27, 31, 40} {
		t.Instructions = append(t.Instructions, &tracepb.Instruction{Pc: alloc + off, FunctionId: 3})
	}
	t.Instructions = append(t.Instructions, &tracepb.Instruction{Pc: brk, FunctionId: 2})
	return t
}
