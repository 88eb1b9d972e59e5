// Package corpus reads the memory-bug test corpus in
// testdata/programs/bugs: small C and C++ programs with one memory bug
// each, and correct programs (named ok_...) of the same shapes, whose
// comments say what a bug finder should report and where.
//
// Markers, each on its own comment line near the top of a program:
//
//	// expect: CLASS[,CLASS...]      or  // expect: none   (ok_ programs)
//	// memcheck: yes                 or  // memcheck: no (why)
//	// args: ARG...                  command-line arguments (optional)
//	// analyze: FLAG...              extra flags for `analyze bugs` (optional)
//	// native: SIGSEGV | SIGABRT | exit N   how a native run ends (optional; default exit 0)
//
// and at the end of source lines:
//
//	STATEMENT //@ bug=CLASS          the symptom: where the bug happens
//	STATEMENT //@ root=CLASS         the root cause the value propagation chain should reach
//
// A line may carry several words (`//@ bug=definite_leak root=definite_leak`),
// and a word may name several classes separated by commas. The classes are
// those of Classes. testdata/programs/bugs/README.md describes the corpus
// and what each marker means for each class.
package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Dir is the corpus directory, relative to the module root.
const Dir = "testdata/programs/bugs"

// The bug classes.
const (
	UnmatchedFree        = "unmatched_free"
	DoubleFree           = "double_free"
	DanglingPointerDeref = "dangling_pointer_deref"
	NullPointerDeref     = "null_pointer_deref"
	HeapBufferOverflow   = "heap_buffer_overflow"
	UninitializedRead    = "uninitialized_read"
	MismatchedFree       = "mismatched_free"
	DefiniteLeak         = "definite_leak"
	PossibleLeak         = "possible_leak"
	StillReachable       = "still_reachable"
	LeakInTransaction    = "leak_in_transaction"
)

// Classes lists the bug classes the markers may name.
var Classes = []string{
	UnmatchedFree, DoubleFree, DanglingPointerDeref, NullPointerDeref,
	HeapBufferOverflow, UninitializedRead, MismatchedFree,
	DefiniteLeak, PossibleLeak, StillReachable, LeakInTransaction,
}

// IsLeak reports whether class is one of the leak classes, whose symptom
// and root are both the allocation of the leaked block.
func IsLeak(class string) bool {
	return class == DefiniteLeak || class == PossibleLeak || class == StillReachable || class == LeakInTransaction
}

func knownClass(c string) bool {
	for _, k := range Classes {
		if k == c {
			return true
		}
	}
	return false
}

// A Program is one program of the corpus and what its markers say.
type Program struct {
	Name      string // file name without its extension: "df_simple"
	Path      string // the source file
	Testprog  string // the name testprog.Build takes: "bugs/df_simple"
	CPlusPlus bool   // a .cc file, built with g++

	// Expect holds the expected classes, in the order of the expect
	// line; it is empty for `// expect: none`.
	Expect []string
	// Memcheck reports whether memcheck reports the bug (the memcheck
	// line says yes); MemcheckWhy is the reason given after "no".
	Memcheck    bool
	MemcheckWhy string
	// Args are the program's command-line arguments, AnalyzeArgs extra
	// flags for the analysis (both split at white space).
	Args        []string
	AnalyzeArgs []string
	// Native is how a native run ends: "exit N", "SIGSEGV" or "SIGABRT"
	// ("exit 0" when the program has no native line).
	Native string

	// Symptoms and Roots map a class to the numbers (1-based, ascending)
	// of the lines marked bug=CLASS and root=CLASS.
	Symptoms map[string][]int
	Roots    map[string][]int

	// Funcs are the function definitions of the file, in order.
	Funcs []Func
	// Far reports whether the root cause is in another function than the
	// symptom: for some expected class, no root line lies in a function
	// that holds a symptom line.
	Far bool
}

// A Func is a function definition: its name and the lines from the one
// that names it to its closing brace.
type Func struct {
	Name       string
	Start, End int
}

// FuncAt returns the name of the function whose definition holds line,
// or "" when none does.
func (p *Program) FuncAt(line int) string {
	for _, f := range p.Funcs {
		if f.Start <= line && line <= f.End {
			return f.Name
		}
	}
	return ""
}

// Bug reports whether the program has a bug (it is not an ok_ program).
func (p *Program) Bug() bool { return len(p.Expect) > 0 }

// Load reads every program (*.c and *.cc) of the corpus under the module
// root directory root (Dir), sorted by name.
func Load(root string) ([]Program, error) {
	return LoadDir(filepath.Join(root, Dir))
}

// LoadDir reads every program (*.c and *.cc) in dir, sorted by name.
func LoadDir(dir string) ([]Program, error) {
	var paths []string
	for _, pat := range []string{"*.c", "*.cc"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("corpus: no programs in %s", dir)
	}
	var progs []Program
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		p, err := Parse(path, data)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	sort.Slice(progs, func(i, j int) bool {
		if progs[i].Name != progs[j].Name {
			return progs[i].Name < progs[j].Name
		}
		return progs[i].Path < progs[j].Path
	})
	return progs, nil
}

var (
	headerRE = regexp.MustCompile(`^\s*//\s*(expect|memcheck|args|analyze|native):(.*)$`)
	markerRE = regexp.MustCompile(`//@(.*)$`)
	nativeRE = regexp.MustCompile(`^(SIG[A-Z]+|exit [0-9]+)$`)
)

// Parse reads the markers of one program's source; path names it (its
// base name gives Name and CPlusPlus; its directory's base name and Name
// give Testprog).
func Parse(path string, src []byte) (Program, error) {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	p := Program{
		Name:      strings.TrimSuffix(base, ext),
		Path:      path,
		CPlusPlus: ext == ".cc",
		Native:    "exit 0",
		Symptoms:  map[string][]int{},
		Roots:     map[string][]int{},
	}
	p.Testprog = filepath.Base(filepath.Dir(path)) + "/" + p.Name
	errorf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if m := headerRE.FindStringSubmatch(text); m != nil {
			key, val := m[1], strings.TrimSpace(m[2])
			if seen[key] {
				return p, errorf(n, "a second %q line", key)
			}
			seen[key] = true
			switch key {
			case "expect":
				if val == "none" {
					break
				}
				for _, c := range strings.Split(val, ",") {
					c = strings.TrimSpace(c)
					if !knownClass(c) {
						return p, errorf(n, "expect: unknown class %q", c)
					}
					for _, d := range p.Expect {
						if d == c {
							return p, errorf(n, "expect: %s twice", c)
						}
					}
					p.Expect = append(p.Expect, c)
				}
			case "memcheck":
				switch {
				case val == "yes":
					p.Memcheck = true
				case val == "no":
				case strings.HasPrefix(val, "no (") && strings.HasSuffix(val, ")"):
					p.MemcheckWhy = strings.TrimSpace(val[len("no (") : len(val)-1])
				default:
					return p, errorf(n, "memcheck: want yes, no or no (why), not %q", val)
				}
			case "args":
				p.Args = strings.Fields(val)
			case "analyze":
				p.AnalyzeArgs = strings.Fields(val)
			case "native":
				if !nativeRE.MatchString(val) {
					return p, errorf(n, "native: want SIGNAME or exit N, not %q", val)
				}
				p.Native = val
			}
			continue
		}
		m := markerRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		if strings.TrimSpace(text[:len(text)-len(m[0])]) == "" {
			return p, errorf(n, "a //@ marker on a line without a statement")
		}
		words := strings.Fields(m[1])
		if len(words) == 0 {
			return p, errorf(n, "an empty //@ marker")
		}
		for _, w := range words {
			kind, classes, ok := strings.Cut(w, "=")
			if !ok || (kind != "bug" && kind != "root") {
				return p, errorf(n, "unknown marker word %q: want bug=CLASS or root=CLASS", w)
			}
			for _, c := range strings.Split(classes, ",") {
				if !knownClass(c) {
					return p, errorf(n, "%s: unknown class %q", kind, c)
				}
				lines := p.Symptoms
				if kind == "root" {
					lines = p.Roots
				}
				if l := lines[c]; len(l) == 0 || l[len(l)-1] != n {
					lines[c] = append(l, n)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("%s: %v", path, err)
	}
	for _, key := range []string{"expect", "memcheck"} {
		if !seen[key] {
			return p, fmt.Errorf("%s: no // %s: line", path, key)
		}
	}
	p.Funcs = scanFuncs(src)
	p.Far = p.far()
	return p, nil
}

// far computes Far from the markers and the functions.
func (p *Program) far() bool {
	for _, c := range p.Expect {
		syms, roots := p.Symptoms[c], p.Roots[c]
		if len(syms) == 0 || len(roots) == 0 {
			continue
		}
		inSym := map[string]bool{}
		for _, s := range syms {
			inSym[p.FuncAt(s)] = true
		}
		apart := true
		for _, r := range roots {
			if inSym[p.FuncAt(r)] {
				apart = false
			}
		}
		if apart {
			return true
		}
	}
	return false
}

// scanFuncs finds the function definitions of a C or C++ source with a
// simple scan: comments, string and character literals and preprocessor
// lines are skipped, braces counted, and a brace opened at depth 0 starts
// a function when the text before it (since the previous `;`, `}` or
// preprocessor line at depth 0) ends with a parameter list `)`, possibly
// followed by const, noexcept, override or final. The name is the
// identifier before that list's `(`. Functions defined inside a class or
// namespace body are not found (the corpus has none that matter).
func scanFuncs(src []byte) []Func {
	var (
		funcs []Func
		hdr   []byte // depth-0 text since the last ; } or preprocessor line
		hdrLn []int  // the line of each byte of hdr
		depth int
		cur   *Func
		line  = 1
		bol   = true // at the beginning of a line (only blanks so far)
	)
	add := func(c byte) {
		if depth == 0 {
			hdr = append(hdr, c)
			hdrLn = append(hdrLn, line)
		}
	}
	reset := func() { hdr, hdrLn = hdr[:0], hdrLn[:0] }
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			add(' ')
			line++
			bol = true
			continue
		case c == '#' && bol:
			// A preprocessor line, with its continuations.
			for i+1 < len(src) && src[i+1] != '\n' {
				if src[i+1] == '\\' && i+2 < len(src) && src[i+2] == '\n' {
					i++
					line++
				}
				i++
			}
			if depth == 0 {
				reset()
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			for i += 2; i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/'); i++ {
				if src[i] == '\n' {
					line++
				}
			}
			i++
			add(' ')
			continue
		case c == '"' || c == '\'':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
				if i < len(src) && src[i] == '\n' {
					line++
				}
			}
			add('_')
			bol = false
			continue
		}
		if c != ' ' && c != '\t' && c != '\r' {
			bol = false
		}
		switch c {
		case '{':
			if depth == 0 {
				if name, start, ok := funcHeader(string(hdr), hdrLn); ok {
					cur = &Func{Name: name, Start: start}
				}
				reset()
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
			if depth == 0 {
				if cur != nil {
					cur.End = line
					funcs = append(funcs, *cur)
					cur = nil
				}
				reset()
			}
		case ';':
			if depth == 0 {
				reset()
			}
		default:
			add(c)
		}
	}
	return funcs
}

// funcHeader decides whether the depth-0 text before a brace, s (with the
// line of each byte in lines), ends like a function definition's
// declarator, and if so returns the function's name and the line of the
// name.
func funcHeader(s string, lines []int) (string, int, bool) {
	t := strings.TrimRight(s, " \t\r")
	for trimmed := true; trimmed; {
		trimmed = false
		for _, q := range []string{"const", "noexcept", "override", "final"} {
			if strings.HasSuffix(t, q) && len(t) > len(q) && !isIdent(t[len(t)-len(q)-1]) {
				t = strings.TrimRight(t[:len(t)-len(q)], " \t\r")
				trimmed = true
			}
		}
	}
	if !strings.HasSuffix(t, ")") {
		return "", 0, false
	}
	// The parameter list's opening parenthesis.
	level, open := 0, -1
	for k := len(t) - 1; k >= 0 && open < 0; k-- {
		switch t[k] {
		case ')':
			level++
		case '(':
			level--
			if level == 0 {
				open = k
			}
		}
	}
	// An initialiser (`int x = f(y) {...}` is no body) is no declarator.
	if open <= 0 || strings.Contains(t[:open], "=") {
		return "", 0, false
	}
	end := open
	for end > 0 && (t[end-1] == ' ' || t[end-1] == '\t' || t[end-1] == '\r') {
		end--
	}
	start := end
	for start > 0 && (isIdent(t[start-1]) || t[start-1] == ':' || t[start-1] == '~') {
		start--
	}
	name := strings.TrimLeft(t[start:end], ":")
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return "", 0, false
	}
	switch name {
	case "if", "for", "while", "switch", "return", "sizeof", "__attribute__":
		return "", 0, false
	}
	return name, lines[start], true
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// String gives a short description of a program: its name, expected
// classes and marked lines.
func (p *Program) String() string {
	var b strings.Builder
	b.WriteString(p.Name)
	if !p.Bug() {
		b.WriteString(" (none)")
		return b.String()
	}
	for _, c := range p.Expect {
		fmt.Fprintf(&b, " %s bug=%s root=%s", c, ints(p.Symptoms[c]), ints(p.Roots[c]))
	}
	if p.Far {
		b.WriteString(" far")
	}
	return b.String()
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
