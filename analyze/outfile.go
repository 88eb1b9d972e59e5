package main

import (
	"fmt"
	"io"
	"os"
)

// outFile is a file a subcommand writes a result to (-o FILE and the
// like). When the path already names something other than a regular file
// (/dev/null, a named pipe, a terminal) it is written as it is: it is not
// truncated, it cannot seek, and it is never removed when the command
// fails. A regular file is created or truncated, and removed again when
// the command fails, so that no half-written result is left behind.
type outFile struct {
	*os.File
	path    string
	regular bool
}

// createOut opens path for a result; what names what the file is for, in
// the error ("create output: ...").
func createOut(path, what string) (*outFile, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		if st.IsDir() {
			return nil, fmt.Errorf("create %s: %s is a directory", what, path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", what, err)
		}
		return &outFile{File: f, path: path}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", what, err)
	}
	return &outFile{File: f, path: path, regular: true}, nil
}

// Seekable says whether the file can seek back (the Arrow and Parquet
// writers need to).
func (o *outFile) Seekable() bool { return o.regular }

// discard closes the file after a failure and removes it when the
// command created it as a regular file.
func (o *outFile) discard() {
	o.Close()
	if o.regular {
		os.Remove(o.path)
	}
}

// writeSeekable runs write on the file when it can seek, else on memory
// whose bytes are then copied to it.
func (o *outFile) writeSeekable(write func(io.WriteSeeker) error) error {
	if o.regular {
		return write(o.File)
	}
	var buf memFile
	if err := write(&buf); err != nil {
		return err
	}
	_, err := o.Write(buf.b)
	return err
}
