package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOutFile checks that a failed command removes a regular output file
// it created, but never a device or a named pipe given as its output
// (-o /dev/null once removed /dev/null when run as root).
func TestOutFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct {
		name, path string
		regular    bool
	}{
		{"regular", filepath.Join(dir, "out.arrow"), true},
		{"device", os.DevNull, false},
		{"fifo", fifo, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "fifo" {
				// A reader, so that opening the pipe for writing does not block.
				r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
			}
			o, err := createOut(c.path, "output")
			if err != nil {
				t.Fatal(err)
			}
			if o.Seekable() != c.regular {
				t.Errorf("Seekable() = %v, want %v", o.Seekable(), c.regular)
			}
			// The Arrow writer seeks back: through memory when the file cannot.
			err = o.writeSeekable(func(w io.WriteSeeker) error {
				if _, err := w.Write([]byte("abcd")); err != nil {
					return err
				}
				_, err := w.Seek(0, io.SeekStart)
				return err
			})
			if err != nil {
				t.Errorf("writeSeekable: %v", err)
			}
			o.discard()
			_, err = os.Lstat(c.path)
			switch {
			case c.regular && err == nil:
				t.Errorf("%s is still there after a failure", c.path)
			case !c.regular && err != nil:
				t.Errorf("%s was removed: %v", c.path, err)
			}
		})
	}
	if _, err := createOut(dir, "output"); err == nil {
		t.Errorf("createOut(a directory) succeeded")
	}
}
