package reduce

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// InputFile says where the reduced input was in the recorded run, to find
// its bytes among the run's input entities.
type InputFile struct {
	// Path is the file's path as the run opened it (absolute, or
	// relative to the run's working directory); empty when the input
	// was standard input.
	Path string
	// Data is the input file's content.
	Data []byte
	// Entities are the reduction's entities (Split of Data): a byte at
	// offset o of the file belongs to the entity that covers o.
	Entities [][]byte
}

// InputMap maps the run's input entities (bytes numbered by
// inputs.Read) to the reduction's entities.
type InputMap struct {
	// Source is the index of the input's source in the run's
	// Entities.Sources.
	Source int
	ents   *inputs.Entities
	starts []int // the reduction entities' byte offsets in the file
	size   int
}

// MapInput finds the input file's source among ents' sources: the file
// source of in.Path, or standard input when in.Path is empty; failing
// those (a trace without paths), the last source other than a module's
// that brought exactly the file's bytes (or, without recorded bytes, as
// many bytes as the file has).
func MapInput(ents *inputs.Entities, in InputFile) (*InputMap, error) {
	m := &InputMap{Source: -1, ents: ents, size: len(in.Data)}
	at := 0
	for _, e := range in.Entities {
		m.starts = append(m.starts, at)
		at += len(e)
	}
	for i, s := range ents.Sources {
		switch {
		case in.Path == "" && s.Kind == inputs.SourceStdin,
			in.Path != "" && s.Kind == inputs.SourceFile && samePath(s.Path, in.Path):
			m.Source = i
		}
	}
	if m.Source < 0 {
		for i, s := range ents.Sources {
			if s.Kind == inputs.SourceModule || s.Bytes != uint64(len(in.Data)) {
				continue
			}
			if data := sourceData(ents, i); data != nil && !bytes.Equal(data, in.Data) {
				continue
			}
			m.Source = i
		}
	}
	if m.Source < 0 {
		what := "standard input"
		if in.Path != "" {
			what = in.Path
		}
		return nil, fmt.Errorf("the recorded run read no input from %s (%d sources)", what, len(ents.Sources))
	}
	return m, nil
}

// samePath says whether two paths name the same file (after cleaning,
// and resolving symbolic links where they exist).
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// sourceData returns the bytes source i brought at their offsets, nil when
// the trace does not hold them all.
func sourceData(ents *inputs.Entities, i int) []byte {
	var out []byte
	for _, r := range ents.Ranges {
		if r.Source != i {
			continue
		}
		if r.Data == nil {
			return nil
		}
		if end := r.Offset + r.Len; uint64(len(out)) < end {
			out = append(out, make([]byte, end-uint64(len(out)))...)
		}
		copy(out[r.Offset:], r.Data)
	}
	return out
}

// Entity returns the reduction entity that holds byte addr of the range
// (-1 when the byte is not the input's, or past its end).
func (m *InputMap) Entity(r inputs.Range, addr uint64) int {
	if r.Source != m.Source || addr < r.Addr || addr >= r.Addr+r.Len {
		return -1
	}
	off := int(r.Offset + (addr - r.Addr))
	if off >= m.size {
		return -1
	}
	return sort.SearchInts(m.starts, off+1) - 1
}

// Entities returns the reduction entities that hold the run's input
// entities nums (each once, ascending).
func (m *InputMap) Entities(nums []uint64) []int {
	seen := map[int]bool{}
	var out []int
	for _, n := range nums {
		r, off, ok := m.ents.Entity(n)
		if !ok {
			continue
		}
		if e := m.Entity(r, r.Addr+off); e >= 0 && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	sort.Ints(out)
	return out
}

// Recording is what IDTHDD takes from the recording of the original
// input: the failure's relevant input sets (step 1) and the dependences
// of its wrong value (step 2), on the reduction's entities.
type Recording struct {
	// Criterion is the failure point as resolved.
	Criterion string
	// Relevance is, per reduction entity, the relevant input sets of the
	// wrong value that hold one of its bytes (the strongest mark wins).
	Relevance []Rel
	// Graph is the backward slice's dependences from the failure point,
	// where a memory edge into a system call that brought the input
	// names the input's bytes read.
	Graph *DepGraph
	// Entities are the run's input entities, Map how the input file's
	// bytes among them map to the reduction's entities.
	Entities *inputs.Entities
	Map      *InputMap
}

// ReadRecording reads the recording of the original input at tracePath:
// its input entities (inputs.Read), the input file among them (MapInput),
// the relevant input sets of the value crit names (inputs.Analyze) and
// the backward slice from crit (slice.Slice, with its edges).
func ReadRecording(tracePath string, crit slice.Criterion, in InputFile) (*Recording, error) {
	tr, err := schema.Open(tracePath)
	if err != nil {
		return nil, err
	}
	ents, err := inputs.Read(tr)
	tr.Close()
	if err != nil {
		return nil, err
	}
	m, err := MapInput(ents, in)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, r := range ents.Ranges {
		if r.Source == m.Source {
			seqs = append(seqs, r.Seq)
		}
	}
	if tr, err = schema.Open(tracePath); err != nil {
		return nil, err
	}
	defer tr.Close()
	run, err := slice.Load(tr, slice.LoadOptions{Events: seqs})
	if err != nil {
		return nil, err
	}
	point, err := run.Resolve(crit)
	if err != nil {
		return nil, err
	}
	rel, err := inputs.Analyze(run, ents, point, inputs.Options{})
	if err != nil {
		return nil, fmt.Errorf("relevant input analysis: %w", err)
	}
	g, err := failureGraph(run, point, ents, m)
	if err != nil {
		return nil, err
	}
	out := &Recording{Criterion: point.Label, Graph: g, Entities: ents, Map: m, Relevance: make([]Rel, len(in.Entities))}
	for _, set := range []struct {
		elems        []inputs.Element
		weak, strong Rel
	}{{rel.Der, Der, Der | DerStrong}, {rel.Cinf, Cinf, Cinf | CinfStrong}, {rel.Ainf, Ainf, Ainf | AinfStrong}} {
		for _, el := range set.elems {
			for _, e := range m.Entities([]uint64{el.Entity}) {
				if el.Strong {
					out.Relevance[e] |= set.strong
				} else {
					out.Relevance[e] |= set.weak
				}
			}
		}
	}
	return out, nil
}

// failureGraph slices run backwards from point and returns the dependence
// graph of the decomposition tree.
func failureGraph(run *slice.Run, point slice.Point, ents *inputs.Entities, m *InputMap) (*DepGraph, error) {
	// The system call instances that brought the input, and their ranges.
	reads := map[int64][]inputs.Range{}
	for _, r := range ents.Ranges {
		if r.Source != m.Source {
			continue
		}
		p, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: r.Seq})
		if err != nil {
			return nil, fmt.Errorf("the input's system call (event %d): %w", r.Seq, err)
		}
		reads[p.Last] = append(reads[p.Last], r)
	}
	res, err := slice.Slice(run, point, slice.Options{})
	if err != nil {
		return nil, err
	}
	g := &DepGraph{Deps: map[int64][]int64{}, Reads: map[int64][]int{}}
	for _, i := range point.Insts {
		g.Roots = append(g.Roots, int64(i))
	}
	if point.HasLoc {
		g.Roots = []int64{-1} // the criterion's location: its edges' user is -1
	}
	for _, e := range res.Edges {
		if rs, ok := reads[e.Def]; ok && e.Kind == slice.DepMemory {
			for _, r := range rs {
				lo, hi := max(e.Addr, r.Addr), min(e.Addr+e.Size, r.Addr+r.Len)
				for a := lo; a < hi; a++ {
					if x := m.Entity(r, a); x >= 0 {
						g.Reads[e.User] = append(g.Reads[e.User], x)
					}
				}
			}
			continue
		}
		g.Deps[e.User] = append(g.Deps[e.User], e.Def)
	}
	return g, nil
}
