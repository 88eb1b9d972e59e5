package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

const inputsHelp = `
Relevant input analysis: which bytes of the run's input (its input
entities: every byte a read, pread64, readv, preadv, recvfrom, recvmsg or
mmap of a file brought in, numbered in the order they came) one value of the
run depends on, and how, after chapter 4 of Yan Wang's dissertation
("Dynamic Analysis Techniques for Effective and Efficient Debugging", UC
Riverside, 2014):
  DERIVED      entities that reach the value through value (operand)
               dependences only
  CINFLUENCED  ... through value and control dependences, at least one of
               them a control dependence
  AINFLUENCED  ... through value, control and address dependences, at
               least one of them an address (pointer or index) dependence
An entity is strong (=) when the value depends on its exact value: it came
through copies, and through equality tests that held, only. A mapping chain
(c= -> 0(cmp) -> 2(tag)) says that a constant was assigned because an
equality test on the entity held. docs/inputs.md gives the rules.

The criterion (--criterion) is as analyze slice takes it:
  FILE:LINE[#K]   the K-th execution of the line (default: the last): the
                  value its last instruction that computes something
                  computes (a conditional branch: its outcome)
  seq:N           the instruction that made event N
  crash           the instruction that faulted: the wrong pointer, that is
                  the registers that formed its memory address
Narrow it to one location with --addr or --reg: then the value is that
location's as the criterion's last instruction uses it (before it runs)
when that instruction reads it, else just after it.

By default the bytes the dynamic loader and the C library read to run the
program (its modules, locale data; sources of kind module) are not
entities; --sources chooses the kinds. --list lists every entity instead.

Output: text (default): per source, the lines of the input that hold
relevant bytes, each with a marker line under it (D, C, A: the sets that
hold the byte; = when strong in one), then the sets as ranges and the
chains. json: the analysis (docs/inputs.md gives the fields). arrow: an
Arrow IPC file with one row per entity and set (give -o FILE when stdout is
a terminal).

Exit status 0 when the analysis was written, 2 for usage or input errors.`

// inputsFlags are the flags of analyze inputs.
type inputsFlags struct {
	criterion, addr, reg string
	format, output       string
	sources              []string
	list, stats          bool
	maxInstances         int
}

// inputsSetup defines the flags of analyze inputs.
func inputsSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &inputsFlags{}
	fs.StringVar(&f.criterion, "criterion", "", "analyse the value at `C`: FILE:LINE[#K], seq:N or crash (required unless --list)")
	fs.StringVar(&f.addr, "addr", "", "narrow the criterion to the memory at `ADDR[:SIZE]` (hex 0x... or decimal; SIZE in bytes, default 8)")
	fs.StringVar(&f.reg, "reg", "", "narrow the criterion to register `REG` (rax..r15, eax, al, xmm0..xmm15, rflags) of the criterion's thread")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the output: text, json, or arrow (one row per entity and set)")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout")
	fs.StringSliceVar(&f.sources, "sources", nil, "count as entities the bytes of sources of `KINDS` (comma-separated: file, stdin, socket, pipe, other, module, or all; default all but module)")
	fs.BoolVar(&f.list, "list", false, "list every input entity (sources, and the ranges each system call brought in) instead of analysing a value")
	fs.BoolVar(&f.stats, "stats", false, "print the pass's statistics and times on stderr")
	fs.IntVar(&f.maxInstances, "max-instructions", 500_000_000, "refuse runs of more than `N` instruction instances (memory: about 40 bytes each)")
	return func(e *env, args []string) error { return runInputs(e, f, args) }
}

// parseSources parses --sources.
func parseSources(vals []string) ([]inputs.SourceKind, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	known := []inputs.SourceKind{inputs.SourceFile, inputs.SourceStdin, inputs.SourceSocket, inputs.SourcePipe,
		inputs.SourceOther, inputs.SourceModule}
	var out []inputs.SourceKind
	for _, v := range vals {
		if v == "all" {
			return known, nil
		}
		ok := false
		for _, k := range known {
			if string(k) == v {
				out, ok = append(out, k), true
			}
		}
		if !ok {
			return nil, usagef("--sources %q: want file, stdin, socket, pipe, other, module or all", v)
		}
	}
	return out, nil
}

// runInputs runs analyze inputs.
func runInputs(e *env, f *inputsFlags, args []string) error {
	if err := formatFlag(f.format, "text", "json", "arrow"); err != nil {
		return err
	}
	kinds, err := parseSources(f.sources)
	if err != nil {
		return err
	}
	var crit slice.Criterion
	if f.list {
		if f.criterion != "" || f.addr != "" || f.reg != "" {
			return usagef("--list lists the entities: it takes no --criterion, --addr or --reg")
		}
		if f.format == "arrow" {
			return usagef("--list writes text or json, not arrow")
		}
	} else if crit, err = parseCriterion(f.criterion, f.addr, f.reg); err != nil {
		return err
	}
	if f.maxInstances < 0 {
		return usagef("--max-instructions %d: want 0 (no limit) or more", f.maxInstances)
	}
	if f.format == "arrow" && (f.output == "" || f.output == "-") && term.IsTerminal(e.stdout) {
		return usagef("--format arrow is binary: give -o FILE, or --format text")
	}
	tracePath, r, err := openTrace(args)
	if err != nil {
		return err
	}
	if err := checkLevel(e, tracePath, r.Header(), schema.LevelHeap, "stack dependences are missing"); err != nil {
		r.Close()
		return err
	}
	start := time.Now()
	ents, err := inputs.Read(r)
	r.Close()
	if err != nil {
		return err
	}
	if f.list {
		out, err := openOutput(f.output, e.stdout)
		if err != nil {
			return err
		}
		if f.format == "json" {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			err = enc.Encode(ents)
		} else {
			err = inputs.WriteList(out, ents)
		}
		return out.finish(err)
	}

	r, err = schema.Open(tracePath)
	if err != nil {
		return err
	}
	defer r.Close()
	run, err := loadRun(e, tracePath, r, crit, f.maxInstances, "the analysis covers the events before the cut")
	if err != nil {
		return err
	}
	loaded := time.Now()
	point, err := run.Resolve(crit)
	if err != nil {
		return err
	}
	aopt := inputs.Options{Sources: kinds}
	if run.Instances() >= progressMinInstances && term.IsTerminal(e.stderr) {
		pass := &progress{w: e.stderr, label: "analyze: propagating input sets in " + tracePath, percent: -1}
		aopt.Progress = pass.update
		defer pass.clear()
	}
	rel, err := inputs.Analyze(run, ents, point, aopt)
	if err != nil {
		return err
	}
	analysed := time.Now()
	if err := writeInputs(e, f, rel, ents); err != nil {
		return err
	}
	if f.stats {
		st := rel.Stats
		secs := analysed.Sub(loaded).Seconds()
		rate := 0.0
		if secs > 0 {
			rate = float64(st.Instances) / secs
		}
		fmt.Fprintf(e.stderr, "analyze: inputs: %d entities (%d sources) read and %d instances loaded in %v; pass %v over %d instances (%.0f instances/s): %d entities placed, %d sets, %d chain links, %d triples, %d shadow pages, %d collections\n",
			ents.Total, len(ents.Sources), run.Instances(), loaded.Sub(start).Round(time.Millisecond), analysed.Sub(loaded).Round(time.Millisecond),
			st.Instances, rate, st.Entities, st.Sets, st.Chains, st.Triples, st.Pages, st.Collections)
	}
	if n := run.Undecoded(); n > 0 {
		fmt.Fprintf(e.stderr, "analyze: warning: %d instructions could not be decoded; their register dependences are missing\n", n)
	}
	if ents.Unplaced > 0 {
		fmt.Fprintf(e.stderr, "analyze: warning: %d system calls brought bytes in that the trace cannot place; they are not entities\n", ents.Unplaced)
	}
	return nil
}

// progressMinInstances is the run length from which the propagation shows
// progress on a terminal.
const progressMinInstances = 20_000_000

// writeInputs writes the analysis in the chosen format.
func writeInputs(e *env, f *inputsFlags, rel *inputs.Relevance, ents *inputs.Entities) error {
	if f.format == "arrow" {
		var buf memFile
		if err := inputs.WriteArrow(&buf, rel, ents); err != nil {
			return err
		}
		out, err := openOutput(f.output, e.stdout)
		if err != nil {
			return err
		}
		_, err = out.Write(buf.b)
		return out.finish(err)
	}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(rel)
	} else {
		err = inputs.WriteText(out, rel, ents)
	}
	return out.finish(err)
}
