package schema

import (
	"errors"
	"fmt"
	"strings"
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

// Error returns "FILE: byte N: block B: malformed trace: what" (without
// "block B: " when the problem is in no block), always on one line.
func (e *FormatError) Error() string {
	var s string
	if e.Block >= 0 {
		s = fmt.Sprintf("%s: byte %d: block %d: malformed trace: %v", e.File, e.Offset, e.Block, e.Err)
	} else {
		s = fmt.Sprintf("%s: byte %d: malformed trace: %v", e.File, e.Offset, e.Err)
	}
	return oneLine.Replace(s)
}

// oneLine escapes line breaks, which an underlying error or a file name
// could hold.
var oneLine = strings.NewReplacer("\n", "\\n", "\r", "\\r")

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// ErrTruncated is wrapped by errors about data that ends before its length
// says it should.
var ErrTruncated = errors.New("unexpected end of trace")
