package schema

import (
	"fmt"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Kind says what an event is. Its values are those of tracepb.EventKind.
type Kind uint8

// The event kinds. See tracepb.EventKind for the fields each one uses.
const (
	KindBlock         = Kind(tracepb.EventKind_BLOCK)
	KindLoad          = Kind(tracepb.EventKind_LOAD)
	KindStore         = Kind(tracepb.EventKind_STORE)
	KindDerive        = Kind(tracepb.EventKind_DERIVE)
	KindCall          = Kind(tracepb.EventKind_CALL)
	KindReturn        = Kind(tracepb.EventKind_RETURN)
	KindSyscall       = Kind(tracepb.EventKind_SYSCALL)
	KindThreadCreate  = Kind(tracepb.EventKind_THREAD_CREATE)
	KindThreadExit    = Kind(tracepb.EventKind_THREAD_EXIT)
	KindThreadSwitch  = Kind(tracepb.EventKind_THREAD_SWITCH)
	KindSignal        = Kind(tracepb.EventKind_SIGNAL)
	KindClientRequest = Kind(tracepb.EventKind_CLIENT_REQUEST)
	KindExit          = Kind(tracepb.EventKind_EXIT)
	KindAlter         = Kind(tracepb.EventKind_ALTER)
	KindRegion        = Kind(tracepb.EventKind_REGION)
	KindMemory        = Kind(tracepb.EventKind_MEMORY)
	KindRegisters     = Kind(tracepb.EventKind_REGISTERS)
	KindSyscallPath   = Kind(tracepb.EventKind_SYSCALL_PATH)
	KindInput         = Kind(tracepb.EventKind_INPUT)

	// The kinds of an execution slice (slice/execslice).
	KindExcluded = Kind(tracepb.EventKind_EXCLUDED)
	KindInject   = Kind(tracepb.EventKind_INJECT)
	KindClobber  = Kind(tracepb.EventKind_CLOBBER)
	KindControl  = Kind(tracepb.EventKind_CONTROL)
	KindPair     = Kind(tracepb.EventKind_PAIR)

	// NumKinds is one more than the largest valid Kind. Not every kind
	// below it is valid: Valid says which.
	NumKinds = KindPair + 1
)

var kindNames = [NumKinds]string{
	KindBlock:         "block",
	KindLoad:          "load",
	KindStore:         "store",
	KindDerive:        "derive",
	KindCall:          "call",
	KindReturn:        "return",
	KindSyscall:       "syscall",
	KindThreadCreate:  "thread-create",
	KindThreadExit:    "thread-exit",
	KindThreadSwitch:  "thread-switch",
	KindSignal:        "signal",
	KindClientRequest: "client-request",
	KindExit:          "exit",
	KindAlter:         "alter",
	KindRegion:        "region",
	KindMemory:        "memory",
	KindRegisters:     "registers",
	KindSyscallPath:   "syscall-path",
	KindInput:         "input",
	KindExcluded:      "excluded",
	KindInject:        "inject",
	KindClobber:       "clobber",
	KindControl:       "control",
	KindPair:          "pair",
}

// Valid reports whether k is a kind a trace may contain.
func (k Kind) Valid() bool { return k > 0 && k < NumKinds && kindNames[k] != "" }

// String returns the kind's name as used on the command line ("load").
func (k Kind) String() string {
	if k.Valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind returns the kind named s (as printed by Kind.String).
func ParseKind(s string) (Kind, error) {
	for k := Kind(1); k < NumKinds; k++ {
		if k.Valid() && kindNames[k] == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown event kind %q", s)
}

// Kinds returns every valid kind in numeric order.
func Kinds() []Kind {
	ks := make([]Kind, 0, NumKinds-1)
	for k := Kind(1); k < NumKinds; k++ {
		if k.Valid() {
			ks = append(ks, k)
		}
	}
	return ks
}

// ThreadID identifies a thread of the recorded program (1 is the initial
// thread; 0 means none).
type ThreadID uint32

// Reg is an x86-64 register number (tracepb.Register); 0 means none.
type Reg uint8

// String returns the register's lower-case name ("rax").
func (r Reg) String() string {
	if name, ok := tracepb.Register_name[int32(r)]; ok {
		return lower(name)
	}
	return fmt.Sprintf("reg%d", uint8(r))
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// NumArgs is the number of argument slots of CALL, SYSCALL and
// CLIENT_REQUEST events.
const NumArgs = 6

// Event is one recorded event. Which fields are meaningful depends on Kind;
// the others are zero. See tracepb.EventKind for the table of fields.
//
// Reader.Next returns a pointer to an Event that it reuses: copy the Event
// (and Data) to keep it past the next call.
type Event struct {
	Seq    uint64   // global sequence number
	Kind   Kind     // what the event is
	Thread ThreadID // the thread it belongs to

	PC      uint64          // instruction address
	Addr    uint64          // access address, derivation result, call target, return address, fault address
	Size    uint32          // size in bytes (LOAD, STORE, MEMORY, REGISTERS, INPUT)
	Value   uint64          // value (low 8 bytes), return value, syscall result, exit code
	Data    []byte          // all bytes of a LOAD/STORE/MEMORY/REGISTERS/INPUT wider than 8 bytes
	BaseReg Reg             // base register of the address (LOAD, STORE) or source (DERIVE)
	Base    uint64          // value of BaseReg
	Reg     Reg             // destination register (DERIVE)
	Count   uint32          // instructions (BLOCK), si_code (SIGNAL)
	SP      uint64          // stack pointer (CALL, RETURN)
	Num     uint64          // syscall number, signal number, client request code, terminating signal (EXIT), 1 when an INPUT's bytes are recorded
	Args    [NumArgs]uint64 // call, syscall and client request arguments
	TID     ThreadID        // new thread (THREAD_CREATE), next thread (THREAD_SWITCH)
	Name    string          // C-point type or marker name (CLIENT_REQUEST), path (SYSCALL_PATH)
}

// Reset sets every field of e to its zero value, keeping Data's storage.
// It assigns field by field: a struct assignment would be a typed copy
// with write barriers, which costs more than filling in an event.
func (e *Event) Reset() {
	e.Seq, e.Kind, e.Thread = 0, 0, 0
	e.PC, e.Addr, e.Size, e.Value, e.BaseReg, e.Base = 0, 0, 0, 0, 0, 0
	e.Reg, e.Count, e.SP, e.Num, e.TID = 0, 0, 0, 0, 0
	e.Args = [NumArgs]uint64{}
	if len(e.Data) != 0 {
		e.Data = e.Data[:0]
	}
	if e.Name != "" {
		e.Name = ""
	}
}

// field bits say which fields a kind uses (and so which columns hold an
// entry for it).
const (
	fPC = 1 << iota
	fAddr
	fSize // size, value and (when wide) data
	fValue
	fBase // base_reg and, when non-zero, base_off
	fReg
	fCount
	fSP
	fNum
	fArgs
	fTID
	fName
)

var kindFields = [NumKinds]uint16{
	KindBlock:         fPC | fCount,
	KindLoad:          fPC | fAddr | fSize | fValue | fBase,
	KindStore:         fPC | fAddr | fSize | fValue | fBase,
	KindDerive:        fPC | fAddr | fBase | fReg,
	KindCall:          fPC | fAddr | fSP | fArgs,
	KindReturn:        fPC | fAddr | fSP | fValue,
	KindSyscall:       fPC | fNum | fArgs | fValue,
	KindThreadCreate:  fTID,
	KindThreadExit:    0,
	KindThreadSwitch:  fTID,
	KindSignal:        fPC | fNum | fCount | fAddr,
	KindClientRequest: fPC | fNum | fName | fArgs,
	KindExit:          fValue | fNum,
	KindAlter:         fPC | fNum | fCount | fAddr,
	KindRegion:        fNum | fCount,
	KindMemory:        fAddr | fSize | fValue,
	KindRegisters:     fNum | fCount | fSize | fValue,
	KindSyscallPath:   fName,
	KindInput:         fAddr | fSize | fValue | fNum,
	KindExcluded:      fPC | fAddr | fCount | fNum,
	KindInject:        fAddr | fSize | fValue,
	KindClobber:       fAddr | fCount,
	KindControl:       fPC | fCount,
	KindPair:          fPC | fCount | fNum,
}

// maxSize returns the largest size an event of kind k may have (k uses
// fSize).
func maxSize(k Kind) uint64 {
	if k == KindInput {
		return MaxInputSize
	}
	return MaxAccessSize
}

// hasData reports whether an event of kind k, size and num carries its
// bytes in the data column (k uses fSize).
func hasData(k Kind, size uint32, num uint64) bool {
	return size > 8 && (k != KindInput || num == InputRecorded)
}

// HasPC reports whether events of kind k carry a program counter.
func (k Kind) HasPC() bool { return k.Valid() && kindFields[k]&fPC != 0 }
