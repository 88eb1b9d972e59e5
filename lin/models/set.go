package models

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// set is a set of values with add, remove, contains and read (all
// elements). Without reads it is partitioned by element: each element's
// operations are checked on their own.
type set struct{ init setState }

// setState is a set as its elements sorted by key encoding; never
// modified once made.
type setState struct {
	keys []string
	vals []lin.Value
}

func newSet(init lin.Value) (lin.Model, error) {
	var s setState
	switch init.Kind {
	case lin.Nil:
	case lin.List:
		for _, v := range init.L {
			s = s.with(v, v.String())
		}
	default:
		return nil, fmt.Errorf("the initial value must be a list of elements, not %s", init)
	}
	return &set{init: s}, nil
}

func (s setState) find(key string) (int, bool) {
	i := sort.SearchStrings(s.keys, key)
	return i, i < len(s.keys) && s.keys[i] == key
}

func (s setState) with(v lin.Value, key string) setState {
	i, ok := s.find(key)
	if ok {
		return s
	}
	n := setState{keys: make([]string, 0, len(s.keys)+1), vals: make([]lin.Value, 0, len(s.keys)+1)}
	n.keys = append(append(append(n.keys, s.keys[:i]...), key), s.keys[i:]...)
	n.vals = append(append(append(n.vals, s.vals[:i]...), v), s.vals[i:]...)
	return n
}

func (s setState) without(key string) setState {
	i, ok := s.find(key)
	if !ok {
		return s
	}
	n := setState{keys: make([]string, 0, len(s.keys)-1), vals: make([]lin.Value, 0, len(s.keys)-1)}
	n.keys = append(append(n.keys, s.keys[:i]...), s.keys[i+1:]...)
	n.vals = append(append(n.vals, s.vals[:i]...), s.vals[i+1:]...)
	return n
}

type setKind uint8

const (
	setAdd setKind = iota
	setRemove
	setContains
	setRead
)

type setAction struct {
	kind setKind
	x    lin.Value
	key  string
	out  output
	// read's output as sorted keys
	readKeys []string
}

func (m *set) Name() string    { return "set" }
func (m *set) Init() lin.State { return m.init }

func (m *set) Hash(s lin.State) uint64 {
	var h uint64 = 14695981039346656037
	for _, k := range s.(setState).keys {
		for i := 0; i < len(k); i++ {
			h = (h ^ uint64(k[i])) * 1099511628211
		}
		h = (h ^ 0xff) * 1099511628211
	}
	return h
}

func (m *set) Equal(s, t lin.State) bool {
	a, b := s.(setState).keys, t.(setState).keys
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (m *set) DescribeState(s lin.State) string {
	var parts []string
	for _, v := range s.(setState).vals {
		parts = append(parts, v.String())
	}
	return "#{" + strings.Join(parts, " ") + "}"
}

func (m *set) Action(op *lin.Op) (lin.Action, error) {
	a := &setAction{out: outputOf(op)}
	switch op.Name {
	case "add":
		a.kind = setAdd
	case "remove":
		a.kind = setRemove
	case "contains":
		a.kind = setContains
	case "read":
		a.kind = setRead
		if a.out.known {
			if a.out.v.Kind != lin.List && !a.out.v.IsNil() {
				return nil, fmt.Errorf("read must return a list of elements, not %s", a.out.v)
			}
			seen := make(map[string]bool)
			for _, v := range a.out.v.L {
				k := v.String()
				if !seen[k] {
					seen[k] = true
					a.readKeys = append(a.readKeys, k)
				}
			}
			sort.Strings(a.readKeys)
		}
		return a, nil
	default:
		return nil, unknownOp("set", op)
	}
	a.x = op.Input
	if a.x.IsNil() && !op.Key.IsNil() {
		a.x = op.Key
	}
	a.key = a.x.String()
	if a.out.known && a.out.v.IsNil() && a.kind != setContains {
		a.out.known = false // add or remove with no result to check
	}
	if a.out.known && a.out.v.Kind != lin.Bool {
		return nil, fmt.Errorf("%s must return a boolean, not %s", op.Name, a.out.v)
	}
	return a, nil
}

func (m *set) Step(s lin.State, a lin.Action) (bool, lin.State) {
	st := s.(setState)
	act := a.(*setAction)
	if act.kind == setRead {
		if !act.out.known {
			return true, s
		}
		return (&set{}).Equal(st, setState{keys: act.readKeys}), s
	}
	_, in := st.find(act.key)
	want := act.out.known && act.out.v.I != 0
	switch act.kind {
	case setContains:
		return !act.out.known || want == in, s
	case setAdd:
		if act.out.known && want == in { // true: it was absent; false: present
			return false, s
		}
		if in {
			return true, s
		}
		return true, st.with(act.x, act.key)
	default: // remove
		if act.out.known && want != in { // true: it was present
			return false, s
		}
		if !in {
			return true, s
		}
		return true, st.without(act.key)
	}
}

// PartitionKey: the element, unless the action reads the whole set.
func (m *set) PartitionKey(a lin.Action) (string, bool) {
	act := a.(*setAction)
	return act.key, act.kind != setRead && len(m.init.keys) == 0
}

// ReadOnly: contains, read, and an add or remove known to have changed
// nothing.
func (m *set) ReadOnly(a lin.Action) bool {
	act := a.(*setAction)
	switch act.kind {
	case setContains, setRead:
		return true
	}
	return act.out.known && act.out.v.I == 0
}

func (m *set) Describe(op *lin.Op) string { return describe(op, true) }
