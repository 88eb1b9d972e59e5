// Package execslice writes execution slices: from a trace and a slice of
// it (package slice), a new trace that keeps the slice's instruction
// instances and replaces each excluded run of a thread (a maximal run of
// its instances not kept) with one record of the side effects it left: an
// EXCLUDED event (the run's first and last instruction, how many instances
// it had, the registers it wrote) followed by REGISTERS events (the values
// it left in them, where the trace says them), INJECT events (the memory
// it left changed, with the values it left, from the trace's STORE values)
// and CLOBBER events (memory it changed whose values the trace does not
// hold: a system call's output). It is the offline form of the slice
// pinballs of Yan Wang's dissertation ("Dynamic Analysis Techniques for
// Effective and Efficient Debugging", UC Riverside, 2014, section 5.3),
// whose relogger skips the code regions not in the slice and injects
// their side effects.
//
// # What the trace keeps
//
// Every kept instance is a BLOCK of one instruction, with its own LOAD,
// STORE, CALL, RETURN and SYSCALL events as the original had them, and a
// CONTROL event naming its control-dependence parent among the thread's
// kept instances (the slicer computed it in the original; the excluded
// runs' branches and returns are gone, so the execution slice carries the
// parents instead of letting the slicer recompute them). Besides the
// slice's members, Options.Skeleton keeps every call, return and system
// call instance, so that the analyses that follow a thread's call stack
// (allocator calls for analyze mg, the squashed text view of a slice) see
// it whole, and Options.Pairs (for a slice cut with
// --prune-save-restore) the save and the restore of every verified
// save/restore pair, with a PAIR event at the restore: the bypass needs
// both, and the execution slice's own frames would verify other pairs.
// Every event that belongs to no instance is kept: thread
// events, signals, client requests, regions with their MEMORY and
// REGISTERS, the exit. The tables are kept whole, but the instructions
// table only for the instructions the execution slice's events name.
//
// # Where the side effects go
//
// A run's record comes after the run's last instance and before the
// thread's next kept instance: it is written when that instance comes,
// and earlier at every client request and region boundary (of any
// thread: the memory at a C-point is the original's) and before the
// thread's own signals, thread events and the exit. A record holds a
// memory byte only when the run wrote it and no other instance or run
// wrote it after the run did, up to the record: the value it carries is
// the byte's value at the record's place, and a record never stands
// between a kept instance's write of a byte and a kept instance's read of
// it. So every kept instance that belongs to the slice reads, in the
// execution slice, the definitions it read in the original, and slicing
// the execution slice from the same criterion gives the same slice (the
// slicer's tests prove it on recorded programs).
package execslice

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// Options are the choices of Write.
type Options struct {
	// Skeleton keeps every call, return and system call instance besides
	// the slice's (see the package comment).
	Skeleton bool
	// Pairs keeps the save and the restore of every verified save/restore
	// pair (slice.Options.PruneSaveRestore: the slice bypassed them).
	Pairs bool
	// Of names the original trace in the header (its path as given).
	Of string
	// From is the first instance the slice could reach (slice.Options.From).
	From uint32
	// SliceOptions are the slicing options, as analyze slice's flags, for
	// the header ("" for the defaults).
	SliceOptions string
	// Progress, when set, is called now and then with the original's
	// event read.
	Progress func(seq uint64)
}

// Stats describe a written execution slice.
type Stats struct {
	// Instances are the original's instruction instances, Kept those the
	// execution slice keeps, Members the slice's among them.
	Instances, Kept, Members uint64
	// Runs are the excluded runs' records (EXCLUDED events).
	Runs uint64
	// Injected and Clobbered count the bytes of INJECT and CLOBBER
	// events, Registers the register values (REGISTERS events) the
	// records carry.
	Injected, Clobbered, Registers uint64
	// Events and OrigEvents are the events of the execution slice and of
	// the original.
	Events, OrigEvents uint64
}

// Write writes the execution slice of res (a slice of the trace tr was
// opened on; tr must be at its start) to w.
func Write(w io.Writer, tr *schema.Reader, res *slice.Result, opt Options) (Stats, error) {
	run := res.Run
	if run.ExecSlice != nil {
		return Stats{}, fmt.Errorf("%s is an execution slice already: cut the execution slice from the original trace %s", tr.Name(), run.ExecSlice.Of)
	}
	n := run.Instances()
	x := &writer{
		run:    run,
		tr:     tr,
		tl:     make([]uint32, n),
		shadow: make(map[uint64]*word),
		named:  make(map[uint64]bool),
		th:     make(map[schema.ThreadID]*thread),
	}
	x.outside = walk.HasRegions(tr.Footer())
	x.kept = keptSet(res, opt.Skeleton, opt.Pairs)
	x.st.Members = uint64(len(res.Members))
	ranks := x.ranks()
	rank := func(i uint32) uint32 {
		if int(i) >= n {
			return uint32(x.st.Kept)
		}
		w := x.kept[i/64] & (1<<(i%64) - 1)
		return ranks[i/64] + uint32(bits.OnesCount64(w))
	}
	x.st.Instances = uint64(n)
	if f := tr.Footer(); f != nil {
		x.st.OrigEvents = f.EventCount
	}

	// The header: the original's, with the description of the slice.
	desc := &slice.ExecSlice{
		Of: opt.Of, Criterion: res.Criterion.Label, From: rank(opt.From),
		Instances: x.st.Instances, Kept: x.st.Kept, Members: x.st.Members,
		Events: x.st.OrigEvents, Options: opt.SliceOptions, Stacks: run.StackRanges(),
	}
	desc.Point = res.Criterion
	desc.Point.Insts = make([]uint32, len(res.Criterion.Insts))
	for k, i := range res.Criterion.Insts {
		desc.Point.Insts[k] = rank(i)
	}
	if res.Criterion.Last >= 0 {
		desc.Point.Last = int64(rank(uint32(res.Criterion.Last)))
	}
	hdr := proto.Clone(tr.Header()).(*tracepb.Header)
	hdr.Settings = append(hdr.Settings, desc.Settings()...)
	wopt := schema.WriterOptions{}
	if f := tr.Footer(); f != nil && f.EndTimeUnixNanos != 0 {
		// The run ended when the original says, not when it was cut.
		end := f.EndTimeUnixNanos
		wopt.Now = func() time.Time { return time.Unix(0, end) }
	}
	out, err := schema.NewWriter(w, hdr, wopt)
	if err != nil {
		return Stats{}, err
	}
	x.out = out
	if err := out.AddTables(staticTables(run.Tables)); err != nil {
		return Stats{}, err
	}
	if _, err := walk.Walk(tr, x, walk.Options{Progress: opt.Progress}); err != nil {
		return Stats{}, err
	}
	if err := x.flushAll(); err != nil {
		return Stats{}, err
	}
	if err := x.flushPending(); err != nil {
		return Stats{}, err
	}
	if x.exit != nil {
		if err := x.emit(x.exit); err != nil {
			return Stats{}, err
		}
	}
	var status *tracepb.ExitStatus
	if f := tr.Footer(); f != nil {
		status = f.Exit
	}
	if err := out.Close(status); err != nil {
		return Stats{}, err
	}
	x.st.Events = out.Events()
	return x.st, nil
}

// Kept returns the instances of res's run that its execution slice keeps,
// in order: instance k of the execution slice is the run's Kept(...)[k].
func Kept(res *slice.Result, skeleton, pairs bool) []uint32 {
	var out []uint32
	for k, w := range keptSet(res, skeleton, pairs) {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, uint32(k*64+b))
			w &^= 1 << b
		}
	}
	return out
}

// keptSet returns the kept instances as a bitset: the slice's members,
// the criterion's last instance (where the traversal starts; with a
// location it need not be a member) and, with skeleton, every call,
// return and system call, and with pairs, both instances of every
// verified save/restore pair.
func keptSet(res *slice.Result, skeleton, pairs bool) []uint64 {
	run := res.Run
	n := run.Instances()
	kept := make([]uint64, (n+63)/64)
	for _, i := range res.Members {
		kept[i/64] |= 1 << (i % 64)
	}
	if skeleton {
		for i := 0; i < n; i++ {
			switch run.StaticOf(uint32(i)).Info.Class {
			case insn.Call, insn.IndirectCall, insn.Return, insn.Syscall:
				kept[i/64] |= 1 << (i % 64)
			}
		}
	}
	if c := res.Criterion.Last; c >= 0 && int(c) < n {
		kept[c/64] |= 1 << (c % 64)
	}
	if pairs {
		for _, r := range run.Restores() {
			s, _, _ := run.SaveOf(r)
			kept[r/64] |= 1 << (r % 64)
			kept[s/64] |= 1 << (s % 64)
		}
	}
	return kept
}

// staticTables returns the tables but the instructions: modules, files,
// functions and types, in id order.
func staticTables(t *schema.Tables) *tracepb.Tables {
	m := &tracepb.Tables{}
	for _, id := range sortedKeys(t.Modules) {
		m.Modules = append(m.Modules, t.Modules[id])
	}
	for _, id := range sortedKeys(t.Files) {
		m.Files = append(m.Files, t.Files[id])
	}
	for _, id := range sortedKeys(t.Functions) {
		m.Functions = append(m.Functions, t.Functions[id])
	}
	for _, name := range sortedKeys(t.Types) {
		m.Types = append(m.Types, t.Types[name])
	}
	return m
}

func sortedKeys[K uint32 | string, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
