package recorder

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/schema"
)

// TriggerKind says what starts or ends a region.
type TriggerKind uint8

// The trigger kinds.
const (
	// TriggerNone never fires: a region without an end lasts to the end
	// of the run.
	TriggerNone TriggerKind = iota
	// TriggerCode fires at the K-th execution of any of its instructions.
	TriggerCode
	// TriggerMark fires at the K-th MGTRACE_MARK(Name).
	TriggerMark
	// TriggerInstructions fires once K instructions have run (counted a
	// superblock at a time, so it fires at the start of the superblock
	// that reaches K).
	TriggerInstructions
)

// CodeLoc names an instruction independently of where its file is
// loaded: the file it is mapped from and its offset in that file.
type CodeLoc struct {
	Path   string
	Offset uint64
}

// Trigger is one end of a region.
type Trigger struct {
	Kind TriggerKind
	// K is the execution (TriggerCode) or marker (TriggerMark) that fires
	// it, from 1, or the instruction count (TriggerInstructions).
	K    uint64
	Locs []CodeLoc // TriggerCode
	Name string    // TriggerMark
}

// Region is a part of the run to record: from the From trigger to the To
// trigger (TriggerNone: to the end). Regions follow each other in order:
// the probe waits for the next region's From only after the previous
// one's To.
type Region struct {
	From, To Trigger
	// Repeat: after the region ends, another starts at the next firing
	// of From, and so on (the regions after it are never reached).
	Repeat bool
}

// writeRegions writes the probe's trigger file (protocol in
// record/vgtool/mgt_main.c) into dir and returns its path.
func writeRegions(dir string, regions []Region) (string, error) {
	var b strings.Builder
	for i, r := range regions {
		if r.Repeat {
			fmt.Fprintf(&b, "%d repeat\n", 2*i)
		}
		for j, t := range []Trigger{r.From, r.To} {
			idx := 2*i + j
			switch t.Kind {
			case TriggerNone:
				fmt.Fprintf(&b, "%d none\n", idx)
			case TriggerCode:
				if len(t.Locs) == 0 {
					return "", fmt.Errorf("region %d: a code trigger without instructions", i+1)
				}
				for _, l := range t.Locs {
					dev, ino, err := fileIdentity(l.Path)
					if err != nil {
						return "", fmt.Errorf("region %d: %w", i+1, err)
					}
					fmt.Fprintf(&b, "%d loc %d %d %d %d\n", idx, max(t.K, 1), dev, ino, l.Offset)
				}
			case TriggerMark:
				if strings.ContainsAny(t.Name, "\n") || t.Name == "" {
					return "", fmt.Errorf("region %d: bad marker name %q", i+1, t.Name)
				}
				fmt.Fprintf(&b, "%d mark %d %s\n", idx, max(t.K, 1), t.Name)
			case TriggerInstructions:
				fmt.Fprintf(&b, "%d icount %d\n", idx, t.K)
			default:
				return "", fmt.Errorf("region %d: unknown trigger kind %d", i+1, t.Kind)
			}
		}
	}
	exact, prefixes := alloc.EntryPatterns()
	for _, n := range exact {
		fmt.Fprintf(&b, "keep =%s\n", n)
	}
	for _, p := range prefixes {
		fmt.Fprintf(&b, "keep ^%s\n", p)
	}
	if len(regions) > 32 {
		return "", fmt.Errorf("at most 32 regions, not %d", len(regions))
	}
	path := filepath.Join(dir, "regions")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("write the region triggers: %w", err)
	}
	return path, nil
}

// outsideCalls keeps, outside regions, only the calls and returns of the
// allocator's functions: the probe reports every call and return there,
// and the heap's blocks are all the analyses need of them.
type outsideCalls struct {
	outside bool
	names   map[uint64]bool              // call target: is an allocator function
	open    map[schema.ThreadID][]uint64 // per thread: stack pointers of allocator calls in progress
}

func newOutsideCalls(regions bool) *outsideCalls {
	return &outsideCalls{outside: regions, names: map[uint64]bool{}, open: map[schema.ThreadID][]uint64{}}
}

// keep says whether ev goes into the trace; name resolves a call target
// to its function's name.
func (o *outsideCalls) keep(ev *schema.Event, name func(uint64) string) bool {
	switch ev.Kind {
	case schema.KindRegion:
		o.outside = ev.Num == 2
		clear(o.open)
	case schema.KindCall:
		if !o.outside {
			return true
		}
		isAlloc, ok := o.names[ev.Addr]
		if !ok {
			fn := alloc.Classify(name(ev.Addr))
			isAlloc = fn != alloc.NotAlloc && fn != alloc.Internal
			o.names[ev.Addr] = isAlloc
		}
		if isAlloc {
			o.open[ev.Thread] = append(o.open[ev.Thread], ev.SP)
		}
		return isAlloc
	case schema.KindReturn:
		if !o.outside {
			return true
		}
		st := o.open[ev.Thread]
		// A return above a call in progress unwound it (longjmp).
		for len(st) > 0 && st[len(st)-1]+8 < ev.SP {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && st[len(st)-1]+8 == ev.SP {
			o.open[ev.Thread] = st[:len(st)-1]
			return true
		}
		o.open[ev.Thread] = st
		return false
	}
	return true
}

// fileIdentity returns the device and inode of the file at path: with an
// offset, they name an instruction for the probe wherever the file is
// loaded (region triggers, alterations).
func fileIdentity(path string) (dev, ino uint64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("no device and inode for %s", path)
	}
	return uint64(st.Dev), st.Ino, nil
}
