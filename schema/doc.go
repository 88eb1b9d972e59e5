// Package schema defines, writes, reads and validates mgtrace trace files.
// Nothing else in the product reads or writes trace bytes.
//
// # Format
//
// A trace is a 16-byte preamble, then blocks, then a 16-byte trailer. Each
// block is a 36-byte header (kind, codec, sizes, event range, a CRC-32C of
// the payload and one of the header itself) followed by its payload: one
// independent zstd frame holding one protobuf message of trace.proto. The
// first block is the Header; TABLES blocks carry static information
// (modules, source lines, functions, instructions, struct layouts) before
// the events that need it; EVENTS blocks carry columnar batches of events
// in global order; the last block is the Footer, with an index of every
// block, counts and the exit status, and the trailer points at it.
// docs/trace-format.md is the full specification.
//
// # Writing
//
// NewWriter writes the preamble and header; Writer.Write takes events in
// global order (it numbers them); Writer.AddTables queues static tables;
// Writer.Close writes the footer and trailer. Each block reaches the
// underlying writer in one Write call as soon as it is complete, so a
// recorder killed mid-run leaves every block but the one being filled.
//
// # Reading
//
// Open (or NewReader) checks the preamble and reads the header; Reader.Next
// returns events one at a time, holding one block in memory whatever the
// trace's size; Reader.SeekSeq jumps to an event through the footer's index
// (or a scan of block headers when the trace was cut short). A trace cut
// short reads up to its last whole block, and Reader.End says where it was
// cut. A corrupt or foreign file gives a *FormatError, one line naming the
// file and byte offset; every size read from the file is checked against
// the limits (MaxStoredSize, MaxRawSize, MaxEventsPerBlock) before memory
// is allocated for it.
//
// # Validating
//
// Summarize reads a whole trace and checks what the block checksums cannot:
// thread switches to threads that exist, nothing after the exit, a footer
// that agrees with the events. It returns the summary `analyze info` prints.
package schema
