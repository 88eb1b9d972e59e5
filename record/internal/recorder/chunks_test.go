package recorder

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"strings"
	"testing"
)

// notices encodes chunk notices as the probe writes them.
func notices(ns ...[2]uint64) []byte {
	var b []byte
	for _, n := range ns {
		b = binary.LittleEndian.AppendUint64(b, n[0]<<32|n[1])
	}
	return b
}

// returned reads the chunk indexes handed back so far.
func returned(t *testing.T, c *chunks, n int) []uint32 {
	t.Helper()
	b := make([]byte, 4*n)
	if _, err := io.ReadFull(c.ret, b); err != nil {
		t.Fatalf("read %d returned chunks: %v", n, err)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func TestChunkReader(t *testing.T) {
	c, err := newChunks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if _, err := os.Stat(c.path); err != nil {
		t.Fatalf("chunk file: %v", err)
	}
	// newChunks handed every chunk to the probe.
	if got := returned(t, c, numChunks); got[0] != 0 || got[numChunks-1] != numChunks-1 {
		t.Fatalf("initial chunks %v", got)
	}
	// Play the probe: write records into chunks 1 and 3 through a writable
	// mapping of the same file.
	f, err := os.OpenFile(c.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("hello, "), 1*chunkBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("world"), 3*chunkBytes); err != nil {
		t.Fatal(err)
	}
	stream := notices([2]uint64{1, 7}, [2]uint64{2, 0}, [2]uint64{3, 5})
	r := newChunkReader(c, bytes.NewReader(stream))
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if string(got) != "hello, world" {
		t.Fatalf("read %q, want the two chunks' records in notice order", got)
	}
	// Chunks come back once read, the empty one at once, in order.
	if back := returned(t, c, 3); back[0] != 1 || back[1] != 2 || back[2] != 3 {
		t.Fatalf("chunks handed back %v, want [1 2 3]", back)
	}
}

func TestChunkReaderBadNotices(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream []byte
		want   string
	}{
		{"chunk out of range", notices([2]uint64{numChunks, 1}), "bad chunk notice"},
		{"too many bytes", notices([2]uint64{0, chunkBytes + 1}), "bad chunk notice"},
		{"cut notice", notices([2]uint64{0, 1})[:5], "ends inside a notice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newChunks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			_, err = io.ReadAll(newChunkReader(c, bytes.NewReader(tc.stream)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadAll = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A recorder killed with -9 leaves its chunk file; the next one removes
// the files of recorders that are gone, and only those.
func TestRemoveStaleChunks(t *testing.T) {
	dir := t.TempDir()
	dead := dir + "/" + chunkFilePrefix + "2147483646-x" // no such pid
	alive := dir + "/" + chunkFilePrefix + "1-x"         // init is always there
	other := dir + "/unrelated"
	for _, p := range []string{dead, alive, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleChunks(dir)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead recorder's chunk file is still there: %v", err)
	}
	for _, p := range []string{alive, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
