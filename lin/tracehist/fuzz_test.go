package tracehist

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// errLine is the shape of every error line of ParseOps.
var errLine = regexp.MustCompile(`^f\.lin:([0-9]+):([0-9]+): (.+)$`)

// FuzzParseOps checks that ParseOps never panics, that a bad file gives
// one line per problem, at a position inside the file, at most one per
// line (line 1 may also hold the file's own problems), in order, and that
// a good file's expressions print as C that parses back to themselves,
// and compile and evaluate against the evaluator tests' types and memory
// without panicking (a compile error is at a position of the file).
func FuzzParseOps(f *testing.F) {
	for _, tc := range goodOps {
		f.Add([]byte(tc.src))
	}
	for _, tc := range badOps {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte("model queue\nop enqueue = enq in (int)arg2 out *(int *)ret\n"))
	f.Add([]byte("model kv\nop get = get key ((struct node *)arg4)->name out ((struct elem *)arg1)[arg3].d[ret & 1], ((stk_t *)arg5)->label\n"))
	mem := testMemory()
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ParseOps("f.lin", src)
		lines := strings.Split(string(src), "\n")
		if err != nil {
			if file != nil {
				t.Fatalf("ParseOps returned a file and an error")
			}
			perLine := make(map[int]int)
			prevLine, prevCol := 0, 0
			for _, l := range strings.Split(err.Error(), "\n") {
				m := errLine.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("malformed error line %q", l)
				}
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				if line < 1 || line > len(lines) || col < 1 || col > len(lines[line-1])+1 {
					t.Fatalf("error %q outside the file (%d lines)", l, len(lines))
				}
				if line < prevLine || line == prevLine && col < prevCol {
					t.Fatalf("error %q out of order", l)
				}
				prevLine, prevCol = line, col
				perLine[line]++
				if perLine[line] > 1 && line != 1 {
					t.Fatalf("two errors on line %d:\n%v", line, err)
				}
				if strings.ContainsAny(m[3], "\r\n") {
					t.Fatalf("error %q holds a line break", l)
				}
			}
			if len(AsErrorList(err)) != strings.Count(err.Error(), "\n")+1 {
				t.Fatalf("the ErrorList does not match the lines of its message")
			}
			return
		}
		if file.Model == "" || len(file.Ops) == 0 {
			t.Fatalf("a file without a model or ops parsed")
		}
		var exprs []Expr
		if file.Object != nil {
			exprs = append(exprs, file.Object)
		}
		for _, o := range file.Ops {
			for _, c := range o.Clauses {
				if len(c.Exprs) == 0 {
					t.Fatalf("clause %s without expressions", c.Kind)
				}
				exprs = append(exprs, c.Exprs...)
			}
		}
		c := &compiler{f: file, tt: testTypes}
		args := [6]uint64{elemAt, intsAt, 1, nodeAt, stkAt, strAt}
		for _, e := range exprs {
			if n, err := c.value(e); err != nil {
				if l := AsErrorList(err); len(l) != 1 || l[0].Line < 1 || l[0].Line > len(lines) || l[0].Col < 1 {
					t.Fatalf("compile error %v is not at a position of the file", err)
				}
			} else {
				valueOf(n, &env{args: args, ret: 2, mem: mem, maxString: 64})
			}
			p := &parser{lx: lexer{src: e.String(), line: 1}}
			back, perr := p.expr()
			if perr != nil {
				t.Fatalf("%s does not parse back: %s", e, perr.msg)
			}
			if back.String() != e.String() {
				t.Fatalf("%s parses back as %s", e, back)
			}
		}
	})
}
