package state

// View is memory and registers as the trace knows them at one moment:
// what `analyze state` prints and GET /api/state returns. Addresses and
// register values are hex strings ("0x4052a0"); a byte is a number, or
// null when the trace does not know it.
type View struct {
	Trace string `json:"trace,omitempty"`
	// Seq is the moment: the state once trace event Seq had run. At the
	// end of the run it is the last event's.
	Seq uint64 `json:"seq"`
	// TS is the MG++ timestamp of the moment, when a graph was given.
	TS *uint32 `json:"ts,omitempty"`
	// Moment is the moment as it was asked for ("cpoint:3"), when known.
	Moment string `json:"moment,omitempty"`

	Memory  []Memory `json:"memory,omitempty"`  // the asked-for address ranges
	Nodes   []Node   `json:"nodes,omitempty"`   // the asked-for heap nodes
	Threads []Thread `json:"threads,omitempty"` // registers, when asked for

	// Live lists heap nodes live at the moment (when no memory was asked
	// for and a graph was given), at most Query.LiveLimit of them;
	// LiveMore says how many more there were.
	Live     []LiveNode `json:"live,omitempty"`
	LiveMore int        `json:"live_more,omitempty"`

	// Events is how many trace events the pass read; it stops early once
	// every asked-for byte is settled after the moment.
	Events uint64 `json:"events"`
	// Notes say what the trace could not tell, one line each.
	Notes []string `json:"notes,omitempty"`
}

// Statement is a source position of an instruction (as explore.Statement).
type Statement struct {
	PC       string `json:"pc"` // hex
	File     string `json:"file,omitempty"`
	Line     uint32 `json:"line,omitempty"`
	Function string `json:"function,omitempty"`
}

// Memory is an address range's bytes at the moment.
type Memory struct {
	Addr  string   `json:"addr"` // hex
	Len   uint64   `json:"len"`
	Bytes []*uint8 `json:"bytes"` // null: unknown
	// Origins say where the bytes' values came from: one entry per run
	// of consecutive bytes with the same origin, in address order.
	Origins []Origin `json:"origins"`
	// Node is the heap node that held Addr at the moment, when a graph
	// was given: a live one, else the allocator block last freed before
	// the moment that held it.
	Node *NodeRef `json:"node,omitempty"`
}

// Origin is where a run of bytes got its value at the moment, or why it
// is unknown.
type Origin struct {
	Offset uint64 `json:"offset"` // of the run's first byte, from the start of the range (or field)
	Len    uint64 `json:"len"`
	Known  bool   `json:"known"`
	// How: store, input, memory (a region trace's contents at its
	// start), inject (an execution slice's), read (a load at or before
	// the moment read it, no write since), read-later (a load after the
	// moment read it, no write between); unknown: never (nothing in the
	// trace wrote or read it), syscall (a system call wrote it without
	// the bytes being recorded), input-unrecorded, clobber, unrecorded
	// (the run went on unrecorded after a region ended), signal (a
	// signal's delivery may have written its frame there).
	How  string     `json:"how"`
	Seq  *uint64    `json:"seq,omitempty"`  // the event that gave the origin
	Stmt *Statement `json:"stmt,omitempty"` // its statement (the store, the load, the system call)
}

// NodeRef names a heap node and its state at the moment.
type NodeRef struct {
	ID     uint32 `json:"id"`
	Status string `json:"status"` // live, freed (aware graphs), merged (agnostic: into a cluster)
}

// Node is a heap node of the MG++ at the moment, with its bytes and, when
// a struct layout fits it, its fields.
type Node struct {
	ID     uint32     `json:"id"`
	Kind   string     `json:"kind"`   // chunk, plain, cluster
	Status string     `json:"status"` // live, freed, merged
	Addr   string     `json:"addr"`   // hex: its extent at the moment (the last one before it ended, when not live)
	Size   uint64     `json:"size"`
	Site   *Statement `json:"site,omitempty"` // allocation site
	// Type is the struct layout its fields are named by ("" when none
	// fits); TypeRule says how it was chosen: "--type", "spec" (the
	// constraint spec binds the node's allocation site to the type),
	// "size" (the one struct of the node's size), or why none was.
	Type     string  `json:"type,omitempty"`
	TypeRule string  `json:"type_rule"`
	Fields   []Field `json:"fields,omitempty"`
	Memory   Memory  `json:"memory"` // all its bytes
}

// Field is one member of a node's struct layout at the moment.
type Field struct {
	Name    string   `json:"name"`
	Type    string   `json:"type,omitempty"` // C type name, when the debug info gives it
	Offset  uint64   `json:"offset"`
	Size    uint64   `json:"size"`
	Pointer bool     `json:"pointer,omitempty"`
	Bytes   []*uint8 `json:"bytes"` // null: unknown
	// Value is the field's little-endian integer value in hex, when it
	// is at most 8 bytes and every byte is known.
	Value string `json:"value,omitempty"`
	// PointsTo is the node the pointer points into at the moment (0:
	// none, or not a known pointer).
	PointsTo uint32   `json:"points_to,omitempty"`
	Origins  []Origin `json:"origins"` // offsets from the field's start
}

// Thread is one thread's registers that the trace shows at the moment.
type Thread struct {
	ID uint32 `json:"id"`
	// Last is the statement of the thread's last event with an
	// instruction at or before the moment, and LastSeq its event.
	Last    *Statement `json:"last,omitempty"`
	LastSeq uint64     `json:"last_seq"`
	// Exited says the thread had exited by the moment: its registers
	// are those it exited with (at a crash, those at the fault).
	Exited    bool       `json:"exited,omitempty"`
	Registers []Register `json:"registers"`
}

// Register is a register's value that an event showed and that no
// instruction the thread ran since could have changed.
type Register struct {
	Name  string     `json:"name"`  // "rdi", "xmm0"
	Value string     `json:"value"` // hex (16 bytes for XMM registers)
	Seq   uint64     `json:"seq"`   // the event that showed it
	How   string     `json:"how"`   // "call argument", "return value", "system call result", ...
	Stmt  *Statement `json:"stmt,omitempty"`
}

// LiveNode is a heap node live at the moment, for the overview.
type LiveNode struct {
	ID   uint32     `json:"id"`
	Kind string     `json:"kind"`
	Addr string     `json:"addr"`
	Size uint64     `json:"size"`
	Type string     `json:"type,omitempty"` // the one struct of its size, when there is one
	Site *Statement `json:"site,omitempty"`
}
