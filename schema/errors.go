package schema

import (
	"errors"
	"fmt"
)

// FormatError reports a trace that is not well formed: corrupt, foreign, or
// written by an incompatible version. Its message is one line naming the
// file and the byte offset of the problem.
type FormatError struct {
	File   string // the file's name, as given to the reader
	Offset int64  // byte offset of the problem (the block's start, or finer)
	Block  int    // index of the block in the file (0 = header block), -1 if none
	Err    error  // what is wrong
}

// Error returns "FILE: byte N: block B: what".
func (e *FormatError) Error() string {
	if e.Block >= 0 {
		return fmt.Sprintf("%s: byte %d: block %d: malformed trace: %v", e.File, e.Offset, e.Block, e.Err)
	}
	return fmt.Sprintf("%s: byte %d: malformed trace: %v", e.File, e.Offset, e.Err)
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// ErrTruncated is wrapped by errors about data that ends before its length
// says it should.
var ErrTruncated = errors.New("unexpected end of trace")
