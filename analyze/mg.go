package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/mgbuild/mgarrow"
	"github.com/mgtrace/mgtrace/schema"
)

const mgHelp = `
Builds the MG++ memory graph of the run (Vineet Singh, Rajiv Gupta and
Iulian Neamtiu, "MG++: Memory Graphs for Analyzing Dynamic Data
Structures", SANER 2015; docs/mgbuild.md): one graph that
holds the heap's shape at every moment, every node and edge labelled with
the timestamp and the source statement that made it, then rolls it back to
the moment asked for (--at) and prints it.

Modes: "aware" makes a node of each block that malloc, calloc, realloc,
new (and relatives) returned, until it is freed, so the graph shows what
the program freed. "agnostic" forms nodes from heap references alone,
without knowing the allocator: addresses reached from one another by
base+offset arithmetic join into one node, a pointer stored into the middle
of a node splits it, an access that joins two nodes merges them under a
cluster node; its nodes are never freed. "auto" (the default) is aware when
the trace has calls of a known allocator function, agnostic otherwise (a
static binary without symbols, a program with its own allocator).

Scopes: "app" (the default) leaves out the accesses of the allocator's own
code and of the dynamic loader; "all" takes in every heap access, so that
the allocator's free lists, splits and consolidations appear.

Moments (--at): end (the default), a timestamp N (the graph after change
N), seq:N (once trace event N had run), cpoint:N (at the N-th C-point),
mark:NAME (at the first marker called NAME).

Formats: text (a summary: counts, allocation sites, largest structures),
json (every node and current edge; schema in docs/mgbuild.md), dot (for
Graphviz: dot -Tsvg), and arrow or parquet: the whole history (not one
moment) as two tables, -o PREFIX writing PREFIX.nodes.EXT and
PREFIX.edges.EXT, every row valid over [valid_from, valid_to), for DuckDB,
Spark or pandas.

Heap overflows: an access computed from a pointer into one node that lands
in another one (agnostic), or outside its block (aware), is a finding.
--overflow lists them and makes the exit status 1 when there are any.`

// mgFlags are the flags of analyze mg.
type mgFlags struct {
	mode, scope, at, format, output string
	overflow                        bool
}

// mgSetup defines the flags of analyze mg.
func mgSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &mgFlags{}
	fs.StringVar(&f.mode, "mode", "auto", "`MODE` of construction: aware (nodes from allocator calls, freed ones ended), agnostic (nodes from heap references), or auto: aware when the trace has allocator calls, else agnostic")
	fs.StringVar(&f.scope, "scope", "app", "`SCOPE` of the accesses taken in: app (not the allocator's or loader's) or all")
	fs.StringVar(&f.at, "at", "end", "`MOMENT` to show: end, a timestamp, seq:N, cpoint:N or mark:NAME")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the output: text, json, dot, or arrow or parquet (the whole history as tables; needs -o)")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout (arrow, parquet: the PREFIX of the two table files)")
	fs.BoolVar(&f.overflow, "overflow", false, "list heap-overflow findings (text, json); exit status 1 when there are any")
	return func(e *env, args []string) error { return runMG(e, f, args) }
}

// runMG runs analyze mg.
func runMG(e *env, f *mgFlags, args []string) error {
	if err := formatFlag(f.format, "text", "json", "dot", "arrow", "parquet"); err != nil {
		return err
	}
	tables := f.format == "arrow" || f.format == "parquet"
	if tables && (f.output == "" || f.output == "-") {
		return usagef("--format %s writes two files: give their prefix with -o", f.format)
	}
	if f.overflow && f.format != "text" && f.format != "json" {
		return usagef("--overflow lists findings in the text or json output, not in %s", f.format)
	}
	auto := f.mode == "auto"
	mode := mgbuild.Aware
	if !auto {
		var err error
		if mode, err = mgbuild.ParseMode(f.mode); err != nil {
			return usagef("--mode: %v (or auto)", err)
		}
	}
	scope, err := mgbuild.ParseScope(f.scope)
	if err != nil {
		return usagef("--scope: %v", err)
	}
	path, r, err := openTrace(args)
	if err != nil {
		return err
	}
	defer func() { r.Close() }()
	if err := checkLevel(e, path, r.Header(), schema.LevelHeap, ""); err != nil {
		return err
	}
	g, err := buildGraph(e, path, r, mgbuild.Options{Mode: mode, Scope: scope}, auto, "the graph holds the events before the cut")
	if err != nil {
		return err
	}
	mode = g.Mode
	ts, err := g.At(f.at)
	if err != nil {
		return usagef("--at: %v", err)
	}
	if !auto && mode == mgbuild.Aware && g.Stats.AllocatorFns == 0 {
		fmt.Fprintf(e.stderr, "analyze: warning: %s: no call of a known allocator function (malloc, free, new, ...) was found; the aware graph is empty\n", oneLine(path))
	}
	if tables {
		return writeTables(g, f.format, f.output)
	}
	snap := g.Snapshot(ts)
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	ropt := mgbuild.ReportOptions{Trace: path, Overflows: f.overflow}
	switch f.format {
	case "json":
		err = mgbuild.WriteJSON(out, snap, ropt)
	case "dot":
		err = mgbuild.WriteDOT(out, snap, ropt)
	default:
		err = mgbuild.WriteText(out, snap, ropt)
	}
	if err = out.finish(err); err != nil {
		return err
	}
	if f.overflow && len(g.Overflows) > 0 {
		return errFindings
	}
	return nil
}

// writeTables writes the graph's history as PREFIX.nodes.EXT and
// PREFIX.edges.EXT.
func writeTables(g *mgbuild.Graph, format, prefix string) error {
	f, ext := mgarrow.Arrow, "arrow"
	if format == "parquet" {
		f, ext = mgarrow.Parquet, "parquet"
	}
	for _, t := range []struct {
		name  string
		write func(*os.File) error
	}{
		{"nodes", func(w *os.File) error { return mgarrow.WriteNodes(w, g, f) }},
		{"edges", func(w *os.File) error { return mgarrow.WriteEdges(w, g, f) }},
	} {
		path := prefix + "." + t.name + "." + ext
		w, err := os.Create(path)
		if err != nil {
			return err
		}
		err = t.write(w)
		// The Parquet writer closes the file itself.
		if cerr := w.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// buildGraph builds the run's MG++ graph with opt, showing progress on a
// terminal; with auto, a trace without allocator calls is read again to
// build the graph from heap references alone (mgbuild.Agnostic), as
// analyze mg does by default. A trace cut short gets a warning that ends
// with cut.
func buildGraph(e *env, path string, r *schema.Reader, opt mgbuild.Options, auto bool, cut string) (*mgbuild.Graph, error) {
	prog := newProgress(e.stderr, path, r.Size())
	opt.Progress = prog.events(r)
	g, err := mgbuild.Build(r, opt)
	prog.clear()
	if err != nil {
		return nil, err
	}
	if auto && g.Stats.AllocatorFns == 0 {
		// No allocator calls to make nodes of: build from references.
		r2, err := schema.Open(path)
		if err != nil {
			return nil, err
		}
		defer r2.Close()
		opt.Mode, opt.Progress = mgbuild.Agnostic, nil
		if g, err = mgbuild.Build(r2, opt); err != nil {
			return nil, err
		}
	}
	if g.Truncated {
		warnTruncated(e.stderr, path, r.End(), cut)
	}
	return g, nil
}
