package recorder

import (
	"io"
)

// prefetcher reads its source on a goroutine of its own into a pool of
// buffers, so that the probe's writes into the FIFO return at once even
// while the decoder is busy: the probe then stalls only when the recorder
// falls more than the pool's size behind.
type prefetcher struct {
	full  chan []byte
	free  chan []byte
	cur   []byte // unread part of the current chunk
	chunk []byte // the current chunk's whole buffer, to give back
	err   error  // the source's error, once full is closed
	done  chan struct{}
}

// newPrefetcher starts reading src into depth buffers of size bytes each.
func newPrefetcher(src io.Reader, size, depth int) *prefetcher {
	p := &prefetcher{full: make(chan []byte, depth), free: make(chan []byte, depth), done: make(chan struct{})}
	for i := 0; i < depth; i++ {
		p.free <- make([]byte, size)
	}
	go p.fill(src)
	return p
}

func (p *prefetcher) fill(src io.Reader) {
	defer close(p.full)
	for {
		var buf []byte
		select {
		case buf = <-p.free:
		case <-p.done:
			return
		}
		n, err := io.ReadAtLeast(src, buf[:cap(buf)], 1)
		if n > 0 {
			p.full <- buf[:n]
		}
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				p.err = err
			}
			return
		}
	}
}

// Read implements io.Reader.
func (p *prefetcher) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.chunk != nil {
			p.free <- p.chunk[:cap(p.chunk)]
			p.chunk = nil
		}
		c, ok := <-p.full
		if !ok {
			if p.err != nil {
				return 0, p.err
			}
			return 0, io.EOF
		}
		p.chunk, p.cur = c, c
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops the reading goroutine (it may still be blocked in a read of
// the source until the source is closed).
func (p *prefetcher) Close() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}
