package lin

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Never is the Return of an operation whose response was never seen, or
// whose outcome is unknown: it may or may not have taken effect, at any
// moment after its call.
const Never int64 = math.MaxInt64

// Status says how an operation ended.
type Status uint8

// The statuses of an operation.
const (
	// OK: the operation completed at Return with Output.
	OK Status = iota
	// Unknown: the operation completed at Return (it took effect before
	// then), but its output is not known (porcupine's etcd logs: a read
	// that timed out).
	Unknown
	// Info: the operation's outcome is indeterminate (Jepsen's :info, a
	// timed-out write): it may or may not have taken effect, at any moment
	// after its call. Return is Never.
	Info
	// Pending: no response was seen (the trace or log ended first). Like
	// Info, it may or may not have taken effect. Return is Never.
	Pending
)

var statusNames = [...]string{OK: "ok", Unknown: "unknown", Info: "info", Pending: "pending"}

// String returns "ok", "unknown", "info" or "pending".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// MarshalText writes the status's name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown operation status %q (want ok, unknown, info or pending)", b)
}

// Optional reports whether an operation with this status may not have
// taken effect at all (Info and Pending).
func (s Status) Optional() bool { return s == Info || s == Pending }

// Op is one operation of a history: a call by a client and, unless it is
// Info or Pending, its response.
type Op struct {
	// ID is the operation's index in History.Ops.
	ID int `json:"id"`
	// Client is the thread or process that made the call. A client's
	// operations do not overlap.
	Client int `json:"client"`
	// Name is the operation: "read", "write", "cas", "enqueue", ...; the
	// model says which names it knows.
	Name string `json:"f"`
	// Key is the key or element the operation is about, for models that
	// partition by it (kv); Nil when there is none.
	Key Value `json:"key,omitempty"`
	// Input is the operation's argument (Nil when it takes none).
	Input Value `json:"input"`
	// Output is what it returned; meaningful only when Status is OK.
	Output Value `json:"output"`
	// Status says how the operation ended.
	Status Status `json:"status"`
	// Call and Return are the positions of the call and of the response
	// in one order of events (event sequence numbers, log lines,
	// timestamps). Return is Never for Info and Pending operations.
	// Operation a precedes b when a.Return < b.Call; equal positions
	// overlap.
	Call   int64 `json:"call"`
	Return int64 `json:"return"`
	// Source says where the operation comes from: "history.edn:12", or
	// the call site in a traced program, "harness.c:40 (worker)".
	Source string `json:"source,omitempty"`
}

// Precedes reports whether o returned before p was called.
func (o *Op) Precedes(p *Op) bool { return o.Return < p.Call }

// Overlaps reports whether neither of o and p precedes the other.
func (o *Op) Overlaps(p *Op) bool { return !o.Precedes(p) && !p.Precedes(o) }

// History is a set of operations on one object.
type History struct {
	// Ops in order of Call (ties by Client); Op.ID is the index.
	Ops []Op `json:"ops"`
	// Model is the model the history's source names (a .lin file's model
	// line, the JSON format's "model"); empty when it names none.
	Model string `json:"model,omitempty"`
	// Init is the model's initial state when the source names one (the
	// JSON format's "init"); Nil for the model's default.
	Init Value `json:"init,omitempty"`
	// Source names where the history comes from (a file name).
	Source string `json:"source,omitempty"`
	// Dropped counts operations the source held that are not in Ops:
	// Jepsen's :fail (known not to have taken effect).
	Dropped int `json:"dropped,omitempty"`
}

// Sort orders the operations by Call (then Client, then Return) and
// renumbers their IDs.
func (h *History) Sort() {
	sort.SliceStable(h.Ops, func(i, j int) bool {
		a, b := &h.Ops[i], &h.Ops[j]
		if a.Call != b.Call {
			return a.Call < b.Call
		}
		if a.Client != b.Client {
			return a.Client < b.Client
		}
		return a.Return < b.Return
	})
	for i := range h.Ops {
		h.Ops[i].ID = i
	}
}

// ValidationError is a history that is not well formed, with the
// operation at fault.
type ValidationError struct {
	Op     int    // index in History.Ops
	Source string // the operation's Source, if any
	Msg    string
}

// Error returns "SOURCE: operation N: MSG".
func (e *ValidationError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("%s: %s", e.Source, e.Msg)
	}
	return fmt.Sprintf("operation %d: %s", e.Op, e.Msg)
}

// Validate checks that h is well formed: IDs are indexes, every operation
// has a name, returns after its call (Return is Never exactly for Info and
// Pending), and a client's operations do not overlap (so a client has at
// most one Info or Pending operation, its last).
func (h *History) Validate() error {
	bad := func(i int, format string, args ...any) error {
		return &ValidationError{Op: i, Source: h.Ops[i].Source, Msg: fmt.Sprintf(format, args...)}
	}
	last := make(map[int]int) // client -> index of its latest operation by call
	order := make([]int, len(h.Ops))
	for i := range h.Ops {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return h.Ops[order[a]].Call < h.Ops[order[b]].Call })
	for i := range h.Ops {
		o := &h.Ops[i]
		if o.ID != i {
			return bad(i, "operation has id %d at index %d", o.ID, i)
		}
		if o.Name == "" {
			return bad(i, "operation has no name")
		}
		if o.Status > Pending {
			return bad(i, "operation has unknown status %d", o.Status)
		}
		if o.Call < 0 || o.Call == Never {
			return bad(i, "operation %s by client %d has no call position", o.Name, o.Client)
		}
		if o.Status.Optional() != (o.Return == Never) {
			if o.Status.Optional() {
				return bad(i, "%s operation %s by client %d has a return position", o.Status, o.Name, o.Client)
			}
			return bad(i, "operation %s by client %d has no response", o.Name, o.Client)
		}
		if o.Return < o.Call {
			return bad(i, "operation %s by client %d returns (at %d) before it is called (at %d)", o.Name, o.Client, o.Return, o.Call)
		}
	}
	for _, i := range order {
		o := &h.Ops[i]
		if j, ok := last[o.Client]; ok {
			p := &h.Ops[j]
			if !p.Precedes(o) {
				if p.Return == Never {
					return bad(i, "client %d calls %s while its %s operation %s (%s) has not returned", o.Client, o.Name, p.Status, p.Name, where(p))
				}
				return bad(i, "client %d calls %s at %d before its operation %s (%s) returns at %d", o.Client, o.Name, o.Call, p.Name, where(p), p.Return)
			}
		}
		last[o.Client] = i
	}
	return nil
}

func where(o *Op) string {
	if o.Source != "" {
		return o.Source
	}
	return fmt.Sprintf("operation %d", o.ID)
}

// Describe formats the operation for people: "cas(1, 2) -> false",
// "read() -> [1 2]", "read() -> ?" for an unknown output, "write(3)
// (pending)" for one that may not have taken effect.
func (o *Op) Describe() string { return o.DescribeAs(true) }

// DescribeAs is Describe, leaving out the output of an operation that has
// none worth showing when showOutput is false (a model's write).
func (o *Op) DescribeAs(showOutput bool) string {
	var b strings.Builder
	b.WriteString(o.Name)
	b.WriteByte('(')
	sep := ""
	if !o.Key.IsNil() {
		b.WriteString(o.Key.String())
		sep = ", "
	}
	switch {
	case o.Input.Kind == List:
		for _, v := range o.Input.L {
			b.WriteString(sep)
			b.WriteString(v.String())
			sep = ", "
		}
	case !o.Input.IsNil():
		b.WriteString(sep)
		b.WriteString(o.Input.String())
	}
	b.WriteByte(')')
	switch o.Status {
	case OK:
		if showOutput {
			b.WriteString(" -> ")
			b.WriteString(o.Output.String())
		}
	case Unknown:
		if showOutput {
			b.WriteString(" -> ?")
		}
	default:
		b.WriteString(" (" + o.Status.String() + ")")
	}
	return b.String()
}
