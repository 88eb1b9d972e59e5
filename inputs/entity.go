// Package inputs finds what a recorded run read from outside and which of
// it matters to a value of the run, after chapter 4 of Yan Wang's
// dissertation ("Dynamic Analysis Techniques for Effective and Efficient
// Debugging", UC Riverside, 2014):
//
//   - input entities: every byte a system call brought into the program
//     (read, pread64, readv, preadv, recvfrom, recvmsg, and mmap of a
//     file), numbered from 0 in the order they came in, each with its
//     source (a file's path, standard input, a socket, a pipe) and its
//     offset in that source (Read);
//   - relevant input analysis: for a value of the run, the entities it
//     is derived from, and those that influence it through control or
//     address dependences, with their strength and mapping chains
//     (Analyze).
//
// Package inputs/reduce simplifies a failing input with ddmin and with the
// dissertation's IDTHDD, which uses the relevant input sets.
package inputs

import "github.com/mgtrace/mgtrace/schema"

// SourceKind says where input bytes came from.
type SourceKind string

// The kinds of sources.
const (
	// SourceFile is a file the program opened (by its path).
	SourceFile SourceKind = "file"
	// SourceStdin is standard input (file descriptor 0 as the program
	// started, whatever it was connected to).
	SourceStdin SourceKind = "stdin"
	// SourceSocket is a socket (socket, accept, accept4, socketpair).
	SourceSocket SourceKind = "socket"
	// SourcePipe is a pipe the program made (pipe, pipe2).
	SourcePipe SourceKind = "pipe"
	// SourceModule is a file the dynamic loader or the C library read or
	// mapped to run the program: a module of the trace's tables, the
	// loader's cache, locale data. Its bytes are entities like any
	// other, but relevant input analysis leaves them out unless asked.
	SourceModule SourceKind = "module"
	// SourceOther is a descriptor the trace does not say the origin of
	// (inherited, or opened by a system call the reader does not follow).
	SourceOther SourceKind = "other"
)

// Source is one origin of input bytes. A file opened several times is one
// source (offsets are offsets in the file); every socket and pipe is a
// source of its own (offsets count the bytes received on it).
type Source struct {
	ID   int        `json:"id"` // its index in Entities.Sources
	Kind SourceKind `json:"kind"`
	// Path is the file's path as the program named it (made absolute
	// against the working directory for a relative open), empty for
	// the other kinds.
	Path string `json:"path,omitempty"`
	// Name is how a person reads it: the path, "stdin", "socket fd 3",
	// "pipe fd 4", "fd 7".
	Name string `json:"name"`
	// Bytes is the number of entities that came from it.
	Bytes uint64 `json:"bytes"`
}

// Range is a run of consecutive entities that one system call brought in
// at consecutive addresses (a readv gives one range per buffer).
type Range struct {
	// First is the number of the range's first entity, Len the number of
	// entities (bytes).
	First uint64 `json:"first"`
	Len   uint64 `json:"len"`
	// Source is the index of the range's source in Entities.Sources, and
	// Offset the offset of its first byte in that source.
	Source int    `json:"source"`
	Offset uint64 `json:"offset"`
	// Addr is where in the program's memory the first byte landed.
	Addr uint64 `json:"addr"`
	// Seq is the system call's SYSCALL event, Thread the thread that made
	// it, Syscall its name (read, pread64, readv, preadv, recvfrom,
	// recvmsg, mmap).
	Seq     uint64          `json:"seq"`
	Thread  schema.ThreadID `json:"thread"`
	Syscall string          `json:"syscall"`
	// Data is the bytes, when the trace holds them (nil otherwise; an
	// mmap'd file's bytes are never recorded).
	Data []byte `json:"-"`
}

// Entities are a run's input entities.
type Entities struct {
	Sources []Source `json:"sources"`
	// Ranges are in entity order: Ranges[k].First is the sum of the
	// earlier ranges' Len.
	Ranges []Range `json:"ranges"`
	// Total is the number of entities.
	Total uint64 `json:"total"`
	// Unrecorded is the number of entities whose bytes the trace does not
	// hold (Range.Data nil): mmap'd files, and reads past the recorder's
	// cap on input bytes or in a trace recorded before INPUT events.
	Unrecorded uint64 `json:"unrecorded,omitempty"`
	// Unplaced counts the system calls that brought bytes in but whose
	// buffers the trace does not say (readv, preadv, preadv2 and recvmsg
	// in a trace recorded before INPUT events): their bytes are not
	// entities.
	Unplaced uint64 `json:"unplaced,omitempty"`
}
