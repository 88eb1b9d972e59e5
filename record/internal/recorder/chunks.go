package recorder

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// chunkBytes is the size of one chunk (MGT_CHUNK_BYTES in
// record/vgtool/protocol.h) and numChunks how many the shared file holds:
// the probe waits only when the recorder is that far behind. Few chunks
// keep the ring in the processor's cache: with 32 (32 MiB) the probe's
// writes and the decoder's reads went to memory, and valgrind took about
// 1.4 s of CPU on the list benchmark against 0.6 s with 2 to 4 chunks.
const (
	chunkBytes = 1 << 20
	numChunks  = 4
)

// chunks is the shared file the probe writes records into, and the FIFO
// that hands chunks back to it.
type chunks struct {
	path string
	mem  []byte
	ret  *os.File
}

// newChunks makes the shared file (in /dev/shm when it can, so that it
// stays in memory) and the return FIFO, and hands every chunk to the
// probe.
func newChunks(work string) (*chunks, error) {
	removeStaleChunks("/dev/shm")
	pattern := fmt.Sprintf("%s%d-", chunkFilePrefix, os.Getpid())
	// Reserve the file's space up front: a full tmpfs would otherwise kill
	// the probe (SIGBUS) when it first writes a page. /dev/shm can be
	// small (64 MiB in many containers): then the work folder serves.
	var f *os.File
	var err error
	for _, dir := range []string{"/dev/shm", work} {
		if f, err = os.CreateTemp(dir, pattern); err != nil {
			continue
		}
		if err = syscall.Fallocate(int(f.Fd()), 0, 0, chunkBytes*numChunks); err == nil {
			break
		}
		f.Close()
		os.Remove(f.Name())
		f = nil
	}
	if f == nil {
		return nil, fmt.Errorf("make the chunk file (%d MiB): %w", chunkBytes*numChunks>>20, err)
	}
	c := &chunks{path: f.Name()}
	defer f.Close()
	c.mem, err = syscall.Mmap(int(f.Fd()), 0, chunkBytes*numChunks, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("map the chunk file: %w", err)
	}
	retPath := filepath.Join(work, "return.fifo")
	if err := syscall.Mkfifo(retPath, 0o600); err != nil {
		c.close()
		return nil, fmt.Errorf("make FIFO %s: %w", retPath, err)
	}
	// Read-write: opening does not wait for the probe, and the probe's
	// reads never see the end of the FIFO while the recorder runs.
	if c.ret, err = os.OpenFile(retPath, os.O_RDWR, 0); err != nil {
		c.close()
		return nil, fmt.Errorf("open FIFO %s: %w", retPath, err)
	}
	for i := 0; i < numChunks; i++ {
		if err := c.giveBack(uint32(i)); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// chunkFilePrefix starts the names of chunk files, followed by the
// recorder's pid.
const chunkFilePrefix = "mgtrace-chunks-"

// removeStaleChunks removes the chunk files in dir of recorders that are
// no longer running (killed before they could remove them: the files are
// numChunks MiB of memory each in /dev/shm).
func removeStaleChunks(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, chunkFilePrefix+"*"))
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), chunkFilePrefix)
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err != nil || pid <= 0 {
			continue
		}
		// Signal 0 checks that the process exists; EPERM means it does.
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			os.Remove(name)
		}
	}
}

// probeArgs are the probe's options for this file.
func (c *chunks) probeArgs() []string {
	return []string{"--mgt-shm=" + c.path, "--mgt-ret=" + c.ret.Name(), fmt.Sprintf("--mgt-chunks=%d", numChunks)}
}

// giveBack hands chunk i back to the probe.
func (c *chunks) giveBack(i uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], i)
	if _, err := c.ret.Write(b[:]); err != nil {
		return fmt.Errorf("hand a chunk back to the probe: %w", err)
	}
	return nil
}

func (c *chunks) close() {
	if c.mem != nil {
		syscall.Munmap(c.mem)
		c.mem = nil
	}
	if c.ret != nil {
		c.ret.Close()
	}
	os.Remove(c.path)
}

// chunkReader reads the probe's stream: it reads notices from the FIFO
// and returns the records of each chunk in turn, handing the chunk back
// once they are read. The decoder reads the chunks in place (Next); Read
// copies them.
type chunkReader struct {
	c       *chunks
	notices *bufio.Reader
	cur     []byte // unread records of the current chunk (Read)
	idx     uint32
	held    bool // the current chunk is still ours to give back
}

func newChunkReader(c *chunks, fifo io.Reader) *chunkReader {
	return &chunkReader{c: c, notices: bufio.NewReaderSize(fifo, 4096)}
}

// Next hands the chunk returned last back to the probe and returns the
// records of the next one, in the shared memory itself: they stay valid
// until the following call. It returns io.EOF at the stream's end.
func (r *chunkReader) Next() ([]byte, error) {
	if r.held {
		r.held = false
		if err := r.c.giveBack(r.idx); err != nil {
			return nil, err
		}
	}
	var nb [8]byte
	if _, err := io.ReadFull(r.notices, nb[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("the probe's notice stream ends inside a notice")
		}
		return nil, err // io.EOF: the stream's end
	}
	notice := binary.LittleEndian.Uint64(nb[:])
	idx, n := uint32(notice>>32), int(notice&0xffffffff)
	if idx >= numChunks || n > chunkBytes {
		return nil, fmt.Errorf("bad chunk notice %#x from the probe", notice)
	}
	r.idx, r.held = idx, true
	start := int(idx) * chunkBytes
	return r.c.mem[start : start+n : start+n], nil
}

// Read implements io.Reader.
func (r *chunkReader) Read(b []byte) (int, error) {
	for len(r.cur) == 0 {
		cur, err := r.Next()
		if err != nil {
			return 0, err
		}
		r.cur = cur
	}
	n := copy(b, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}
