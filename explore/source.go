package explore

import (
	"bufio"
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
)

// codeIndex is what the tables say about code, indexed once: the
// instructions in address order, and struct types by size.
type codeIndex struct {
	pcs    []uint64
	bySize map[uint64]string // the one struct type of each size; "" when several
}

func newCodeIndex(t *schema.Tables) *codeIndex {
	c := &codeIndex{pcs: make([]uint64, 0, len(t.Instructions)), bySize: make(map[uint64]string)}
	for pc := range t.Instructions {
		c.pcs = append(c.pcs, pc)
	}
	slices.Sort(c.pcs)
	for name, ty := range t.Types {
		if ty.Size == 0 {
			continue
		}
		if _, dup := c.bySize[ty.Size]; dup {
			c.bySize[ty.Size] = ""
		} else {
			c.bySize[ty.Size] = name
		}
	}
	return c
}

// typeBySize names the one struct type of the given size, or "".
func (c *codeIndex) typeBySize(size uint64) string { return c.bySize[size] }

// lineKey is a source line.
type lineKey struct {
	file string
	line uint32
}

// lineCounts returns the instructions executed per source line: a BLOCK
// at pc with count n covers the n instructions of the table from pc, in
// address order (as package tarantula reads coverage).
func (s *Session) lineCounts() map[lineKey]uint64 {
	s.mu.Lock()
	blocks := s.blocks.snapshot()
	s.mu.Unlock()
	out := make(map[lineKey]uint64)
	pcs := s.code.pcs
	for k, n := range blocks {
		i := sort.Search(len(pcs), func(i int) bool { return pcs[i] >= k.pc })
		if i == len(pcs) || pcs[i] != k.pc {
			continue
		}
		for j := i; j < len(pcs) && j < i+int(k.count); j++ {
			in := s.tables.Instructions[pcs[j]]
			if in.Line == 0 {
				continue
			}
			f := s.tables.Files[in.FileId]
			if f == nil {
				continue
			}
			out[lineKey{cleanPath(f.Path), in.Line}] += n
		}
	}
	if c := s.crashPC(); c != 0 {
		// The faulting instruction ran but did not complete: no BLOCK
		// counts it.
		if in := s.tables.Instructions[c]; in != nil && in.Line != 0 {
			if f := s.tables.Files[in.FileId]; f != nil {
				out[lineKey{cleanPath(f.Path), in.Line}]++
			}
		}
	}
	return out
}

// crashPC returns the pc of the crash, or 0.
func (s *Session) crashPC() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crash == nil {
		return 0
	}
	return s.crash.pc
}

// Files lists the source files the tables name, with what ran in them.
func (s *Session) Files() Files {
	counts := s.lineCounts()
	marks := s.lineMarks()
	type acc struct {
		lines int
		count uint64
		marks int
	}
	byFile := make(map[string]*acc)
	for _, f := range s.tables.Files {
		p := cleanPath(f.Path)
		if p != "" && byFile[p] == nil {
			byFile[p] = &acc{}
		}
	}
	for k, n := range counts {
		a := byFile[k.file]
		if a == nil {
			a = &acc{}
			byFile[k.file] = a
		}
		a.lines++
		a.count += n
	}
	for k, m := range marks {
		if a := byFile[k.file]; a != nil {
			a.marks += len(m)
		}
	}
	out := Files{Files: []FileSummary{}}
	for p, a := range byFile {
		if a.lines == 0 && a.marks == 0 {
			continue // a file of the debug info that nothing ran in
		}
		_, ok := s.findSource(p)
		out.Files = append(out.Files, FileSummary{Path: p, Lines: a.lines, Count: a.count, Available: ok, Marks: a.marks})
	}
	slices.SortFunc(out.Files, func(a, b FileSummary) int {
		if a.Available != b.Available {
			if a.Available {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	return out
}

// Source returns one file with per-line counts and marks. file is a path
// as Files lists it, or a trailing part of one (schema.MatchFile).
func (s *Session) Source(file string) (Source, error) {
	if file == "" {
		return Source{}, badf("no file given")
	}
	path := ""
	for _, f := range s.tables.Files {
		p := cleanPath(f.Path)
		if p == cleanPath(file) {
			path = p
			break
		}
		if schema.MatchFile(p, file) && (path == "" || p < path) {
			path = p
		}
	}
	if path == "" {
		return Source{}, badf("no source file %q in the trace", file)
	}
	counts := s.lineCounts()
	marks := s.lineMarks()
	src := Source{Path: path, Lines: []SourceLine{}}
	if text, ok := s.findSource(path); ok {
		if b, err := os.ReadFile(text); err == nil {
			src.Available = true
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			n := uint32(0)
			for sc.Scan() {
				n++
				k := lineKey{path, n}
				src.Lines = append(src.Lines, SourceLine{N: n, Text: sc.Text(), Count: counts[k], Marks: marks[k]})
			}
		}
	}
	if !src.Available {
		var lines []uint32
		seen := map[uint32]bool{}
		for k := range counts {
			if k.file == path && !seen[k.line] {
				seen[k.line] = true
				lines = append(lines, k.line)
			}
		}
		for k := range marks {
			if k.file == path && !seen[k.line] {
				seen[k.line] = true
				lines = append(lines, k.line)
			}
		}
		slices.Sort(lines)
		for _, l := range lines {
			k := lineKey{path, l}
			src.Lines = append(src.Lines, SourceLine{N: l, Count: counts[k], Marks: marks[k]})
		}
	}
	return src, nil
}

// findSource returns where the text of a source file the trace names can
// be read: the path itself (relative paths from the recording's working
// directory, then from here), or under a --source-dir remap.
func (s *Session) findSource(p string) (string, bool) {
	var cands []string
	for _, d := range s.opt.SourceDirs {
		if from, to, ok := strings.Cut(d, "="); ok {
			if rest, ok := strings.CutPrefix(p, filepath.Clean(from)); ok {
				cands = append(cands, filepath.Join(to, rest))
			}
			continue
		}
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		for i := range parts {
			cands = append(cands, filepath.Join(append([]string{d}, parts[i:]...)...))
		}
	}
	if filepath.IsAbs(p) {
		cands = append(cands, p)
	} else {
		if s.header != nil && s.header.Cwd != "" {
			cands = append(cands, filepath.Join(s.header.Cwd, p))
		}
		cands = append(cands, p)
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}

// lineMarks returns the stages' overlays by source line.
func (s *Session) lineMarks() map[lineKey][]LineMark {
	s.stMu.Lock()
	f := s.findings
	s.stMu.Unlock()
	out := make(map[lineKey][]LineMark)
	add := func(st Statement, m LineMark) {
		if st.File == "" || st.Line == 0 {
			return
		}
		k := lineKey{cleanPath(st.File), st.Line}
		out[k] = append(out[k], m)
	}
	for i, fl := range f.Faults {
		var at *Moment
		if len(fl.Changes) > 0 {
			at = &Moment{TS: fl.Changes[0].TS, Seq: fl.Changes[0].Seq}
		}
		add(fl.Stmt, LineMark{Kind: "fault", Label: fl.Why, Ref: i, At: at})
		for _, c := range fl.Changes {
			if c.Stmt != nil && (c.Stmt.File != fl.Stmt.File || c.Stmt.Line != fl.Stmt.Line) {
				add(*c.Stmt, LineMark{Kind: "change", Label: c.Kind, Ref: i, At: &Moment{TS: c.TS, Seq: c.Seq}})
			}
		}
	}
	if f.Slice != nil {
		for _, l := range f.Slice.Lines {
			add(l, LineMark{Kind: "slice", Label: f.Slice.Criterion})
		}
	}
	for i, b := range f.Bugs {
		at := b.At
		add(b.Where, LineMark{Kind: "finding", Label: b.Rule + ": " + b.Message, Ref: i, At: &at})
		for _, ch := range b.Chains {
			for _, st := range ch {
				add(st, LineMark{Kind: "chain", Label: b.Rule, Ref: i})
			}
		}
	}
	for i, v := range f.Violations {
		at := v.At
		if v.Where != nil {
			add(*v.Where, LineMark{Kind: "violation", Label: v.Text, Ref: i, At: &at})
		}
	}
	if f.Crash != nil {
		at := f.Crash.At
		add(f.Crash.Where, LineMark{Kind: "crash", Label: f.Crash.Signal, At: &at})
	}
	return out
}
