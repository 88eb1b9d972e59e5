package main

import (
	"bufio"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/bugs/corpus"
)

// mcFrame is one frame of a memcheck stack: "at 0x1091F1: main
// (df_simple.c:35)" or "by 0x4841F2F: free (in /usr/lib/...so)".
type mcFrame struct {
	Func string
	File string // base name of the source file, "" when memcheck names an object
	Line int
	Obj  string // the object file, when memcheck has no source line
}

// String is "file:line (func)" or "func (in obj)".
func (f mcFrame) String() string {
	if f.File != "" {
		return f.File + ":" + strconv.Itoa(f.Line) + " (" + f.Func + ")"
	}
	if f.Obj != "" {
		return f.Func + " in " + filepath.Base(f.Obj)
	}
	return f.Func
}

// mcError is one error (or leak record) memcheck reported.
type mcError struct {
	Headline string // its first line: "Invalid read of size 8"
	Kind     string // the headline without sizes and counts: "Invalid read"
	// Class is the corpus bug class the error is one of, "" when memcheck's
	// kind has none (a wild access, an overlap, a fishy argument).
	Class string
	// Address is the " Address ... is ..." line, when there is one.
	Address string
	// Stacks are the error's stacks: where it happened first, then the
	// ones its sub-headlines introduce (" Address ... free'd", " Block was
	// alloc'd at"). A leak's first stack is the allocation's.
	Stacks [][]mcFrame
}

// where returns the error's first frame in the source file base (the
// program's own line), or when none is the first frame outside
// Valgrind's own replacement functions (malloc, free, the string
// functions).
func (e *mcError) where(base string) mcFrame {
	if len(e.Stacks) == 0 || len(e.Stacks[0]) == 0 {
		return mcFrame{}
	}
	for _, f := range e.Stacks[0] {
		if base != "" && f.File == base {
			return f
		}
	}
	for _, f := range e.Stacks[0] {
		if !strings.Contains(filepath.Base(f.Obj), "vgpreload_") {
			return f
		}
	}
	return e.Stacks[0][0]
}

// ownLine returns the first line of the error's first stack that is in
// the source file base, or 0.
func (e *mcError) ownLine(base string) int {
	if f := e.where(base); f.File == base {
		return f.Line
	}
	return 0
}

// lines returns every line of the source file base that any of the
// error's stacks names.
func (e *mcError) lines(base string) []int {
	var out []int
	for _, st := range e.Stacks {
		for _, f := range st {
			if f.File == base {
				out = append(out, f.Line)
			}
		}
	}
	return out
}

// mcOutput is what one memcheck run reported.
type mcOutput struct {
	Errors []mcError
	// Summary is the ERROR SUMMARY's error count, -1 when the output has
	// none (memcheck -q prints none).
	Summary, Contexts int
	// Signal names the fatal signal the program died of ("SIGSEGV"), ""
	// when it exited.
	Signal string
}

var (
	mcPrefixRE  = regexp.MustCompile(`^==\d+== ?(.*)$`)
	mcFrameRE   = regexp.MustCompile(`^\s+(?:at|by) 0x[0-9A-Fa-f]+: (.*)$`)
	mcSummaryRE = regexp.MustCompile(`ERROR SUMMARY: (\d+) errors? from (\d+) contexts?`)
	mcLeakRE    = regexp.MustCompile(`are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record`)
	mcSignalRE  = regexp.MustCompile(`^Process terminating with default action of signal \d+ \((SIG[A-Z0-9]+)\)`)
	mcSizeRE    = regexp.MustCompile(` of size \d+$`)
	mcAddrRE    = regexp.MustCompile(`^\s*Address (0x[0-9A-Fa-f]+) is`)
)

// nullLimit is the highest address a NULL dereference reaches: a field of
// a struct at NULL, or an element of an array at NULL.
const nullLimit = 4096

// parseMemcheck reads memcheck's output (its standard error, with or
// without -q): the error records and leak records, in order, each
// classified; the ERROR SUMMARY; the fatal signal. Lines without
// memcheck's "==PID==" prefix (the program's own standard error) are
// skipped.
func parseMemcheck(out string) mcOutput {
	res := mcOutput{Summary: -1, Contexts: -1}
	var rec []string
	flush := func() {
		if len(rec) > 0 {
			if e, ok := parseRecord(rec); ok {
				res.Errors = append(res.Errors, e)
			}
			if m := mcSignalRE.FindStringSubmatch(rec[0]); m != nil {
				res.Signal = m[1]
			}
		}
		rec = rec[:0]
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		m := mcPrefixRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		text := m[1]
		if s := mcSummaryRE.FindStringSubmatch(text); s != nil {
			res.Summary, _ = strconv.Atoi(s[1])
			res.Contexts, _ = strconv.Atoi(s[2])
		}
		if strings.TrimSpace(text) == "" {
			flush()
			continue
		}
		rec = append(rec, text)
	}
	flush()
	return res
}

// parseRecord reads one record (the lines between blank ones) and says
// whether it is an error: a known error or leak headline, or any other
// record with a stack except the fatal signal's.
func parseRecord(rec []string) (mcError, bool) {
	e := mcError{Headline: strings.TrimSpace(rec[0])}
	cur := -1
	for _, line := range rec[1:] {
		if m := mcFrameRE.FindStringSubmatch(line); m != nil {
			if cur < 0 {
				e.Stacks = append(e.Stacks, nil)
				cur = 0
			}
			e.Stacks[cur] = append(e.Stacks[cur], parseFrame(m[1]))
			continue
		}
		// A sub-headline starts the next stack.
		if strings.HasPrefix(strings.TrimSpace(line), "Address ") && e.Address == "" {
			e.Address = strings.TrimSpace(line)
		}
		if cur < 0 {
			cur = 0
			e.Stacks = append(e.Stacks, nil)
		}
		if len(e.Stacks[cur]) > 0 {
			e.Stacks = append(e.Stacks, nil)
			cur++
		}
	}
	// Drop empty stacks (a sub-headline without frames).
	kept := e.Stacks[:0]
	for _, st := range e.Stacks {
		if len(st) > 0 {
			kept = append(kept, st)
		}
	}
	e.Stacks = kept
	e.Kind, e.Class = classify(e.Headline, e.Address)
	if e.Kind == "" {
		if len(e.Stacks) == 0 || mcSignalRE.MatchString(e.Headline) {
			return e, false
		}
		e.Kind = e.Headline
	}
	return e, true
}

// parseFrame reads what follows "at 0xADDR: ": "FUNC (FILE:LINE)" or
// "FUNC (in OBJECT)". C++ names hold parentheses and blanks themselves,
// so the location is the last parenthesised part.
func parseFrame(s string) mcFrame {
	var f mcFrame
	i := strings.LastIndex(s, " (")
	if i < 0 || !strings.HasSuffix(s, ")") {
		f.Func = s
		return f
	}
	f.Func = s[:i]
	loc := s[i+2 : len(s)-1]
	if obj, ok := strings.CutPrefix(loc, "in "); ok {
		f.Obj = obj
		return f
	}
	if c := strings.LastIndexByte(loc, ':'); c > 0 {
		if n, err := strconv.Atoi(loc[c+1:]); err == nil {
			f.File, f.Line = filepath.Base(loc[:c]), n
			return f
		}
	}
	f.Obj = loc
	return f
}

// classify returns an error's kind (its headline without sizes) and the
// corpus class it is one of, from its headline and its Address line. The
// kind is "" for a record that is no error headline memcheck is known to
// print.
func classify(headline, address string) (kind, class string) {
	h := headline
	switch {
	case strings.HasPrefix(h, "Invalid free()"):
		if strings.Contains(address, " block of size") && strings.HasSuffix(address, "free'd") {
			return "Invalid free", corpus.DoubleFree
		}
		return "Invalid free", corpus.UnmatchedFree
	case strings.HasPrefix(h, "Mismatched free()"):
		return "Mismatched free", corpus.MismatchedFree
	case strings.HasPrefix(h, "Invalid read of size"), strings.HasPrefix(h, "Invalid write of size"):
		kind = mcSizeRE.ReplaceAllString(h, "")
		switch {
		case strings.Contains(address, "not stack'd, malloc'd"):
			// "... or (recently) free'd": no block at all.
			if m := mcAddrRE.FindStringSubmatch(address); m != nil {
				if a, err := strconv.ParseUint(m[1], 0, 64); err == nil && a < nullLimit {
					return kind, corpus.NullPointerDeref
				}
			}
		case strings.Contains(address, " block of size") && strings.HasSuffix(address, "free'd"):
			return kind, corpus.DanglingPointerDeref
		case strings.Contains(address, " after a block"), strings.Contains(address, " before a block"):
			return kind, corpus.HeapBufferOverflow
		}
		return kind, ""
	case strings.HasPrefix(h, "Conditional jump or move depends on uninitialised"):
		return "Conditional jump depends on uninitialised", corpus.UninitializedRead
	case strings.HasPrefix(h, "Use of uninitialised value"):
		return "Use of uninitialised value", corpus.UninitializedRead
	case strings.HasPrefix(h, "Syscall param") && strings.Contains(h, "uninitialised"):
		return "Syscall param", corpus.UninitializedRead
	}
	if m := mcLeakRE.FindStringSubmatch(h); m != nil {
		switch m[1] {
		case "definitely lost":
			return m[1], corpus.DefiniteLeak
		case "possibly lost":
			return m[1], corpus.PossibleLeak
		case "still reachable":
			return m[1], corpus.StillReachable
		}
		return m[1], ""
	}
	for _, k := range []string{"Source and destination overlap", "Jump to the invalid address", "Invalid free", "Syscall param",
		"Argument", "Invalid alignment", "Unaddressable byte(s)"} {
		if strings.HasPrefix(h, k) {
			return k, ""
		}
	}
	return "", ""
}
