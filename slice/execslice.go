package slice

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// ExecSlice describes an execution slice: a trace that keeps the
// instruction instances of a slice of another trace and replaces each
// excluded run of a thread's instances with the side effects it left
// (Yan Wang's dissertation, "Dynamic Analysis Techniques for Effective and
// Efficient Debugging", UC Riverside, 2014, section 5.3; package
// slice/execslice writes one). Its header's settings (the keys below,
// docs/trace-format.md section 5.6) say what it is.
type ExecSlice struct {
	// Of is the name of the trace it was cut from.
	Of string
	// Criterion is the criterion as it was resolved in that trace
	// (Point.Label), and Point that criterion in this trace: its
	// instances (Insts, Last) are this trace's.
	Criterion string
	Point     Point
	// From is the first instance the slice could reach (a region's or
	// --region's start), in this trace.
	From uint32
	// Instances and Events are the original trace's instruction
	// instances and events; Kept the instances this trace keeps, Members
	// how many of them are the slice's (the others are kept calls,
	// returns and system calls).
	Instances, Events, Kept, Members uint64
	// Options are the slicing options the slice was computed with, as
	// analyze slice's flags ("" for the defaults).
	Options string
	// Stacks are the threads' stack ranges in the original run (the
	// slicer's test of rbp-based accesses; the kept instances alone
	// would give narrower ones).
	Stacks map[schema.ThreadID][2]uint64
}

// The keys of an execution slice's header settings.
const (
	keyOf        = schema.SettingExecutionSlice
	keyCriterion = "xslice.criterion"
	keyInsts     = "xslice.criterion-instances"
	keyLast      = "xslice.criterion-last"
	keyLocation  = "xslice.criterion-location"
	keyFrom      = "xslice.from"
	keyKept      = "xslice.instances"
	keyMembers   = "xslice.members"
	keyEvents    = "xslice.events"
	keyOptions   = "xslice.options"
	keyStacks    = "xslice.stacks"
)

// Settings returns the header settings that describe x.
func (x *ExecSlice) Settings() []*tracepb.KeyValue {
	kv := func(k, v string) *tracepb.KeyValue { return &tracepb.KeyValue{Key: k, Value: v} }
	insts := make([]string, len(x.Point.Insts))
	for i, n := range x.Point.Insts {
		insts[i] = strconv.FormatUint(uint64(n), 10)
	}
	out := []*tracepb.KeyValue{
		kv(keyOf, x.Of),
		kv(keyCriterion, x.Criterion),
		kv(keyInsts, strings.Join(insts, ",")),
		kv(keyLast, strconv.FormatInt(x.Point.Last, 10)),
	}
	switch p := x.Point; {
	case p.HasLoc && p.Reg != 0:
		out = append(out, kv(keyLocation, "reg "+schema.Reg(p.Reg).String()))
	case p.HasLoc:
		out = append(out, kv(keyLocation, fmt.Sprintf("addr %#x:%d", p.Addr, p.Size)))
	}
	out = append(out,
		kv(keyFrom, strconv.FormatUint(uint64(x.From), 10)),
		kv(keyKept, fmt.Sprintf("%d/%d", x.Kept, x.Instances)),
		kv(keyMembers, strconv.FormatUint(x.Members, 10)),
		kv(keyEvents, strconv.FormatUint(x.Events, 10)),
	)
	if x.Options != "" {
		out = append(out, kv(keyOptions, x.Options))
	}
	if len(x.Stacks) > 0 {
		ts := make([]schema.ThreadID, 0, len(x.Stacks))
		for t := range x.Stacks {
			ts = append(ts, t)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		parts := make([]string, len(ts))
		for i, t := range ts {
			s := x.Stacks[t]
			parts[i] = fmt.Sprintf("%d:%#x-%#x", t, s[0], s[1])
		}
		out = append(out, kv(keyStacks, strings.Join(parts, ",")))
	}
	return out
}

// ParseExecSlice reads an execution slice's description from a trace's
// header: nil when the trace is not one, an error when its settings are
// malformed.
func ParseExecSlice(h *tracepb.Header) (*ExecSlice, error) {
	if !schema.IsExecutionSlice(h) {
		return nil, nil
	}
	x := &ExecSlice{Point: Point{Last: -1}}
	bad := func(k, v string) error {
		return fmt.Errorf("execution slice: header setting %s=%q is malformed", k, v)
	}
	for _, kv := range h.GetSettings() {
		k, v := kv.GetKey(), kv.GetValue()
		var err error
		switch k {
		case keyOf:
			x.Of = v
		case keyCriterion:
			x.Criterion = v
			x.Point.Label = v
		case keyInsts:
			for _, f := range strings.Split(v, ",") {
				if f == "" {
					continue
				}
				n, perr := strconv.ParseUint(f, 10, 32)
				if perr != nil {
					return nil, bad(k, v)
				}
				x.Point.Insts = append(x.Point.Insts, uint32(n))
			}
		case keyLast:
			x.Point.Last, err = strconv.ParseInt(v, 10, 64)
		case keyLocation:
			err = x.parseLocation(v)
		case keyFrom:
			var n uint64
			n, err = strconv.ParseUint(v, 10, 32)
			x.From = uint32(n)
		case keyKept:
			a, b, ok := strings.Cut(v, "/")
			if !ok {
				return nil, bad(k, v)
			}
			if x.Kept, err = strconv.ParseUint(a, 10, 64); err == nil {
				x.Instances, err = strconv.ParseUint(b, 10, 64)
			}
		case keyMembers:
			x.Members, err = strconv.ParseUint(v, 10, 64)
		case keyEvents:
			x.Events, err = strconv.ParseUint(v, 10, 64)
		case keyOptions:
			x.Options = v
		case keyStacks:
			err = x.parseStacks(v)
		}
		if err != nil {
			return nil, bad(k, v)
		}
	}
	return x, nil
}

func (x *ExecSlice) parseLocation(v string) error {
	if r, ok := strings.CutPrefix(v, "reg "); ok {
		reg, err := ParseReg(r)
		if err != nil {
			return err
		}
		x.Point.HasLoc, x.Point.Reg = true, reg
		return nil
	}
	if a, ok := strings.CutPrefix(v, "addr "); ok {
		addr, size, err := ParseAddr(a)
		if err != nil {
			return err
		}
		x.Point.HasLoc, x.Point.Addr, x.Point.Size = true, addr, size
		return nil
	}
	return fmt.Errorf("unknown location %q", v)
}

func (x *ExecSlice) parseStacks(v string) error {
	x.Stacks = make(map[schema.ThreadID][2]uint64)
	for _, part := range strings.Split(v, ",") {
		t, rng, ok := strings.Cut(part, ":")
		lo, hi, ok2 := strings.Cut(rng, "-")
		if !ok || !ok2 {
			return fmt.Errorf("bad stack %q", part)
		}
		tid, err := strconv.ParseUint(t, 10, 32)
		if err != nil {
			return err
		}
		l, err := strconv.ParseUint(lo, 0, 64)
		if err != nil {
			return err
		}
		h, err := strconv.ParseUint(hi, 0, 64)
		if err != nil {
			return err
		}
		x.Stacks[schema.ThreadID(tid)] = [2]uint64{l, h}
	}
	return nil
}

// SavedCriterion returns the criterion an execution slice was cut for,
// resolved in it: slicing the execution slice from it gives the slice
// the original trace gave.
func (r *Run) SavedCriterion() (Point, error) {
	x := r.ExecSlice
	if x == nil {
		return Point{}, fmt.Errorf("%s is not an execution slice: give a criterion", r.Name)
	}
	p := x.Point
	p.Insts = append([]uint32(nil), p.Insts...)
	if p.Last < 0 || p.Last >= int64(len(r.sid)) {
		return Point{}, fmt.Errorf("%s: the saved criterion's instance %d is not in the trace", r.Name, p.Last)
	}
	for _, i := range p.Insts {
		if int(i) >= len(r.sid) {
			return Point{}, fmt.Errorf("%s: the saved criterion's instance %d is not in the trace", r.Name, i)
		}
	}
	return p, nil
}

// StackRanges returns each thread's stack range as the slicer estimated
// it (lo, hi: the lowest and highest rsp-based access), for an execution
// slice's header.
func (r *Run) StackRanges() map[schema.ThreadID][2]uint64 {
	out := make(map[schema.ThreadID][2]uint64, len(r.stack))
	for t, s := range r.stack {
		if s.hi != 0 {
			out[r.Threads[t]] = [2]uint64{s.lo, s.hi}
		}
	}
	return out
}

// effect is an execution slice's excluded run: the registers and memory
// it left changed, which no instance of the trace defined. It lies
// between instances at-1 and at.
type effect struct {
	at     uint32
	thread uint32
	regs   uint64
	mem    []interval
}
