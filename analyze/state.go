package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/explore/state"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

const stateHelp = `
Shows memory and registers as the trace knows them at a moment of the run
(docs/state.md): bytes by address range (--addr), heap nodes of the MG++
memory graph (Singh, Gupta and Neamtiu, "MG++: Memory Graphs for Analyzing
Dynamic Data Structures", SANER 2015) by id (--node) with their fields
named by the program's struct layouts, and the registers that events
showed (--registers). With no --addr or --node it lists the heap nodes
live at the moment (the first 50) and the known registers.

A byte's value is that of the last write at or before the moment whose
value the trace holds (a store, bytes a system call read in, a region
trace's starting contents), or the value a load read with no write
between it and the moment (before or after it). A write whose value the
trace does not hold (a system call without its bytes) makes it unknown
again. Unknown bytes are shown as ?? (null in JSON), never guessed; every
run of bytes says where its value came from. A register is shown when an
event showed its value (a call's arguments, a return's or system call's
result, a load's base register or destination, an address derivation, a
region's registers) and no instruction the thread ran since defines it.

Moments (--at): end (the default), a timestamp N of the MG++ graph, seq:N
(once trace event N had run), cpoint:N (at the N-th C-point), mark:NAME (at
the first marker called NAME). The graph is built only for a timestamp,
--node, or the list of live nodes.

A node's layout: --type, else the type a --spec binds its allocation site
to, else the one struct of the node's size; the output says which rule
chose it. Globals (--global) need data symbols, which traces do not hold
yet: give a global's address with --addr.`

// stateFlags are the flags of analyze state.
type stateFlags struct {
	at, typ, specPath, format, output string
	addrs, nodes, globals             []string
	registers                         bool
	limit                             int
}

// stateSetup defines the flags of analyze state.
func stateSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &stateFlags{}
	fs.StringVar(&f.at, "at", "end", "`MOMENT`: end, a graph timestamp N, seq:N, cpoint:N or mark:NAME")
	fs.StringArrayVar(&f.addrs, "addr", nil, "show the bytes at `ADDR[:LEN]` (hex with 0x, or decimal; LEN defaults to 8); repeatable")
	fs.StringArrayVar(&f.globals, "global", nil, "show the global variable `SYM` (not yet: traces hold no data symbols); repeatable")
	fs.StringArrayVar(&f.nodes, "node", nil, "show the heap node with MG++ id `ID`, its fields and bytes; repeatable")
	fs.StringVar(&f.typ, "type", "", "name the nodes' fields by struct `T` of the debug information")
	fs.StringVar(&f.specPath, "spec", "", "constraint spec `FILE` whose bindings give the nodes' types")
	fs.BoolVar(&f.registers, "registers", false, "show the registers the trace knows (the default when nothing else is asked for)")
	fs.IntVar(&f.limit, "live", state.DefaultLiveLimit, "list at most `N` live nodes when nothing is asked for")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the output: text or json")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout")
	return func(e *env, args []string) error { return runState(e, f, args) }
}

// parseAddr parses ADDR[:LEN].
func parseAddr(s string) (state.Range, error) {
	a, l, hasLen := strings.Cut(s, ":")
	addr, err := strconv.ParseUint(strings.TrimSpace(a), 0, 64)
	if err != nil {
		return state.Range{}, usagef("--addr %q: want ADDR[:LEN], ADDR in hex (0x...) or decimal", s)
	}
	n := uint64(8)
	if hasLen {
		if n, err = strconv.ParseUint(strings.TrimSpace(l), 0, 64); err != nil || n == 0 || n > state.MaxBytes {
			return state.Range{}, usagef("--addr %q: LEN must be 1 to %d", s, state.MaxBytes)
		}
	}
	if addr+n < addr {
		return state.Range{}, usagef("--addr %q: the range passes the end of the address space", s)
	}
	return state.Range{Addr: addr, Len: n}, nil
}

// runState runs analyze state.
func runState(e *env, f *stateFlags, args []string) error {
	if err := formatFlag(f.format, "text", "json"); err != nil {
		return err
	}
	q := state.Query{Type: f.typ, Registers: f.registers, LiveLimit: f.limit}
	if f.limit < 1 {
		return usagef("--live must be at least 1")
	}
	for _, a := range f.addrs {
		r, err := parseAddr(a)
		if err != nil {
			return err
		}
		q.Ranges = append(q.Ranges, r)
	}
	for _, n := range f.nodes {
		id, err := strconv.ParseUint(strings.TrimSpace(n), 10, 32)
		if err != nil || id == 0 {
			return usagef("--node %q: want a node id (1, 2, ...), as analyze mg shows them", n)
		}
		q.Nodes = append(q.Nodes, mgbuild.NodeID(id))
	}
	if len(f.globals) > 0 {
		return fmt.Errorf("--global %s: the trace holds no data symbols (globals' addresses are not recorded); give its address with --addr", f.globals[0])
	}
	if len(q.Ranges) == 0 && len(q.Nodes) == 0 {
		q.Registers = true
	}
	path, r, err := openTrace(args)
	if err != nil {
		return err
	}
	defer func() { r.Close() }()
	if err := checkLevel(e, path, r.Header(), schema.LevelHeap, "stack bytes are unknown"); err != nil {
		return err
	}
	if f.specPath != "" {
		src, err := os.ReadFile(f.specPath)
		if err != nil {
			return fmt.Errorf("read spec: %w", err)
		}
		if err := notATrace(e, f.specPath, src, "a spec", path); err != nil {
			return err
		}
		if q.Spec, err = spec.Parse(f.specPath, src); err != nil {
			return specErrors(err)
		}
	}
	var g *mgbuild.Graph
	needGraph := state.NeedsGraph(f.at) || len(q.Nodes) > 0 || len(q.Ranges) == 0
	if needGraph {
		if g, err = buildGraph(e, path, r, mgbuild.Options{Mode: mgbuild.Aware}, true, "the state holds the events before the cut"); err != nil {
			return err
		}
		r.Close()
		if r, err = schema.Open(path); err != nil {
			return err
		}
	}
	at, err := state.Resolve(g, f.at)
	if err != nil {
		return usagef("--at: %v", err)
	}
	prog := newProgress(e.stderr, path, r.Size())
	progress := prog.events(r)
	v, err := state.At(r, g, at, q, progress)
	prog.clear()
	if err != nil {
		return err
	}
	v.Trace = path
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	if f.format == "json" {
		// One line: a node's bytes would take a line each indented.
		err = json.NewEncoder(out).Encode(v)
	} else {
		err = state.WriteText(out, v)
	}
	return out.finish(err)
}
