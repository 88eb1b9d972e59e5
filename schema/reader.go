package schema

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// End says how a trace ends: whole (footer and trailer present) or cut
// short, and where.
//
// A trace cut short ends at its last whole block: TruncatedAt is the end of
// that block (of the preamble when no block is whole, 0 when not even the
// preamble is). A trace cut inside its footer has every event but no
// footer; one cut inside its trailer has every event and its footer
// (TruncatedAt is then the end of the footer). Zero bytes that end the
// file, as a crash can leave them, cut the trace at the block they start
// in (or after the footer), not corrupt it; zero bytes after a trailer, or
// from inside one, are corruption.
type End struct {
	// Whole is true when the trace has its footer and trailer.
	Whole bool
	// TruncatedAt is the offset of the first byte that is not part of a whole
	// block (for a trace cut short; the file size otherwise).
	TruncatedAt int64
	// Size is the file's size.
	Size int64
	// Reason says why the trace counts as cut short.
	Reason string
}

// BlockRef locates one block of a trace.
type BlockRef struct {
	Offset   int64
	Kind     BlockKind
	Size     int64 // header included
	FirstSeq uint64
	Events   uint32
}

// Reader reads a trace: its header when opened, then events in global order
// with Next, loading static tables as it meets them. It holds one block in
// memory at a time.
//
// A trace cut short (the recorder was killed, the disk filled) reads up to
// its last whole block; Next then returns io.EOF and End reports the cut.
// A corrupt trace yields every event of the whole blocks before the damage,
// then a *FormatError.
type Reader struct {
	name   string
	ra     io.ReaderAt
	size   int64
	closer io.Closer

	header *tracepb.Header
	tables *Tables
	footer *tracepb.Footer
	end    End

	zeroFrom  int64 // where the file's tail of zero bytes starts (see zeroTail)
	zeroKnown bool

	off     int64 // next block's offset
	blockNo int   // next block's index
	nextSeq uint64
	done    bool  // no more blocks
	err     error // sticky

	// blocks known so far: read in order, or all of them from the footer
	index        []BlockRef
	indexWhole   bool
	tablesLoaded map[int64]bool

	dec    *zstd.Decoder
	bd     batchDecoder
	ev     Event
	stored []byte
	raw    []byte
}

// Open opens the trace file at path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open trace: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open trace %s: is a directory", path)
	}
	r, err := NewReader(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the trace of size bytes in ra; name is used in errors.
func NewReader(ra io.ReaderAt, size int64, name string) (*Reader, error) {
	if size < 0 {
		return nil, fmt.Errorf("read trace %s: negative size %d", name, size)
	}
	// Never read past size, even when ra holds more (a trace still being
	// written): every check below relies on it.
	ra = io.NewSectionReader(ra, 0, size)
	// DecodeAll never grows the buffer it is given (of the block's raw
	// size): a frame cannot make the decoder allocate what it claims.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxRawSize),
		zstd.WithDecoderMaxWindow(MaxRawSize), zstd.IgnoreChecksum(true), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, fmt.Errorf("create zstd decoder: %w", err)
	}
	r := &Reader{name: name, ra: ra, size: size, tables: NewTables(), dec: dec,
		header: &tracepb.Header{}, tablesLoaded: make(map[int64]bool)}
	r.end.Size = size
	if err := r.readStart(); err != nil {
		dec.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) formatErr(off int64, block int, format string, args ...any) *FormatError {
	return &FormatError{File: r.name, Offset: off, Block: block, Err: fmt.Errorf(format, args...)}
}

// readStart checks the preamble, reads the header block, and the footer if
// the trace is whole.
func (r *Reader) readStart() error {
	if r.size == 0 {
		return r.formatErr(0, -1, "empty file (not a trace, or the recorder stopped before writing anything)")
	}
	pre := make([]byte, PreambleSize)
	n, err := r.ra.ReadAt(pre, 0)
	if n < PreambleSize {
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s: %w", r.name, err)
		}
		if !bytes.HasPrefix(Magic[:], pre[:min(n, len(Magic))]) {
			return r.formatErr(0, -1, "not an mgtrace trace (bad magic %q)", pre[:min(n, len(Magic))])
		}
		if !bytes.HasPrefix(encodePreamble(), pre[:n]) {
			return r.formatErr(int64(len(Magic)), -1, "unsupported trace format version or flags % x (this build reads version %d; the file ends inside the preamble)",
				pre[len(Magic):n], FormatVersion)
		}
		r.truncate(0, "the file ends inside the preamble")
		return nil
	}
	if err := checkPreamble(pre); err != nil {
		return r.formatErr(0, -1, "%v", err)
	}
	r.off = PreambleSize
	h, payload, ok, err := r.readBlockAt(r.off, 0)
	if err != nil {
		return err
	}
	if !ok {
		return nil // cut inside the header block
	}
	if h.Kind != BlockHeaderKind {
		return r.formatErr(r.off, 0, "first block is a %s block, want header", h.Kind)
	}
	if err := proto.Unmarshal(payload, r.header); err != nil {
		return r.formatErr(r.off, 0, "decode header: %v", err)
	}
	if r.header.FormatVersion != FormatVersion {
		return r.formatErr(r.off, 0, "header says format version %d, preamble says %d", r.header.FormatVersion, FormatVersion)
	}
	r.addIndex(BlockRef{Offset: r.off, Kind: h.Kind, Size: BlockHeaderSize + int64(h.StoredSize)})
	r.off += BlockHeaderSize + int64(h.StoredSize)
	r.blockNo = 1
	r.readFooterFromTrailer()
	return nil
}

// readFooterFromTrailer loads the footer and block index through the
// trailer when the file has one. A missing or unusable trailer is not an
// error here: sequential reading finds out what is wrong, and where.
func (r *Reader) readFooterFromTrailer() {
	if r.size < PreambleSize+TrailerSize {
		return
	}
	tr := make([]byte, TrailerSize)
	if r.readAt(tr, r.size-TrailerSize) != nil {
		return
	}
	if [8]byte(tr[8:]) != TrailerMagic {
		return
	}
	off := int64(binary.LittleEndian.Uint64(tr))
	if off < PreambleSize || off > r.size-TrailerSize-BlockHeaderSize {
		return
	}
	h, payload, ok, err := r.readBlockAt(off, -1)
	if err != nil || !ok || h.Kind != BlockFooter || off+BlockHeaderSize+int64(h.StoredSize) != r.size-TrailerSize {
		r.end = End{Size: r.size}
		r.done = false
		return
	}
	f := &tracepb.Footer{}
	if proto.Unmarshal(payload, f) != nil {
		return
	}
	idx, err := footerIndex(f, off)
	if err != nil || len(r.index) != 1 || idx[0] != r.index[0] {
		return // inconsistent index: read sequentially instead
	}
	r.index = idx
	r.indexWhole = true
	r.footer = f
}

// footerIndex checks the block index of footer f, whose block is at byte
// end, and returns it: blocks that follow one another from the preamble to
// the footer, the header block first, then TABLES and EVENTS blocks within
// the limits of block headers, EVENTS blocks numbering events from 0 on
// without gaps, as many as the footer counts.
func footerIndex(f *tracepb.Footer, end int64) ([]BlockRef, error) {
	idx := make([]BlockRef, 0, len(f.Frames))
	var at int64 = PreambleSize
	var seq uint64
	for i, fr := range f.Frames {
		b := BlockRef{Offset: at, Kind: BlockKind(fr.Kind), Size: int64(fr.Size), FirstSeq: fr.FirstSeq, Events: fr.EventCount}
		kindOK := fr.Kind == uint32(BlockTables) || fr.Kind == uint32(BlockEvents)
		if i == 0 {
			kindOK = fr.Kind == uint32(BlockHeaderKind)
		}
		switch {
		case fr.Offset != uint64(at):
			return nil, fmt.Errorf("footer's index puts block %d at byte %d, the block before it ends at %d", i, fr.Offset, at)
		case !kindOK:
			return nil, fmt.Errorf("footer's index gives block %d kind %d", i, fr.Kind)
		case fr.Size < BlockHeaderSize || fr.Size > BlockHeaderSize+MaxStoredSize || fr.Size > uint64(end-at):
			return nil, fmt.Errorf("footer's index gives block %d at byte %d a size of %d bytes", i, at, fr.Size)
		case b.Kind == BlockEvents && (fr.FirstSeq != seq || fr.EventCount == 0 || fr.EventCount > MaxEventsPerBlock):
			return nil, fmt.Errorf("footer's index gives block %d events %d+%d, want %d+1..%d", i, fr.FirstSeq, fr.EventCount, seq, MaxEventsPerBlock)
		case b.Kind != BlockEvents && (fr.FirstSeq != 0 || fr.EventCount != 0):
			return nil, fmt.Errorf("footer's index gives %s block %d events %d+%d, want none", b.Kind, i, fr.FirstSeq, fr.EventCount)
		}
		at += b.Size
		seq += uint64(b.Events)
		idx = append(idx, b)
	}
	if at != end {
		return nil, fmt.Errorf("footer's index ends at byte %d, the footer is at %d", at, end)
	}
	if seq != f.EventCount {
		return nil, fmt.Errorf("footer's index holds %d events, the footer counts %d", seq, f.EventCount)
	}
	return idx, nil
}

// truncate records that the trace is cut short at off.
func (r *Reader) truncate(off int64, reason string) {
	r.done = true
	r.end = End{Whole: false, TruncatedAt: off, Size: r.size, Reason: reason}
}

// readBlockAt reads the block at off. ok is false (and the reader marked
// truncated) when the file ends before the block does. block is the block's
// index for errors (-1 when unknown); the returned payload is valid until
// the next call.
func (r *Reader) readBlockAt(off int64, block int) (h BlockHeader, payload []byte, ok bool, err error) {
	rest := r.size - off
	if rest < BlockHeaderSize {
		if rest == 0 {
			r.truncate(off, "the file ends after a whole block, without a footer")
		} else {
			r.truncate(off, "the file ends inside a block header")
		}
		return h, nil, false, nil
	}
	hb := make([]byte, BlockHeaderSize)
	if err := r.readAt(hb, off); err != nil {
		return h, nil, false, err
	}
	h, herr := decodeBlockHeader(hb)
	if herr != nil {
		if z := r.zeroTail(); z < off+BlockHeaderSize {
			r.truncate(off, zeroReason(z, off))
			return h, nil, false, nil
		}
		return h, nil, false, r.formatErr(off, block, "%v", herr)
	}
	if rest < BlockHeaderSize+int64(h.StoredSize) {
		r.truncate(off, fmt.Sprintf("the file ends inside a %s block of %d bytes", h.Kind, BlockHeaderSize+int64(h.StoredSize)))
		return h, nil, false, nil
	}
	r.stored = grow(r.stored, int(h.StoredSize))
	if err := r.readAt(r.stored, off+BlockHeaderSize); err != nil {
		return h, nil, false, err
	}
	if got := checksum(r.stored); got != h.PayloadCRC {
		if z := r.zeroTail(); z < off+BlockHeaderSize+int64(h.StoredSize) {
			r.truncate(off, zeroReason(z, off))
			return h, nil, false, nil
		}
		return h, nil, false, r.formatErr(off, block, "%s block payload checksum mismatch (header says %#08x, payload has %#08x)",
			h.Kind, h.PayloadCRC, got)
	}
	if h.Codec == codecNone {
		return h, r.stored, true, nil
	}
	if err := r.checkZstdSize(r.stored, h.RawSize); err != nil {
		return h, nil, false, r.formatErr(off+BlockHeaderSize, block, "%s block: %v", h.Kind, err)
	}
	r.raw, err = r.dec.DecodeAll(r.stored, grow(r.raw, int(h.RawSize))[:0])
	if err != nil {
		return h, nil, false, r.formatErr(off+BlockHeaderSize, block, "%s block: decompress: %v", h.Kind, err)
	}
	if len(r.raw) != int(h.RawSize) {
		return h, nil, false, r.formatErr(off, block, "%s block decompresses to %d bytes, header says %d", h.Kind, len(r.raw), h.RawSize)
	}
	return h, r.raw, true, nil
}

// checkZstdSize refuses a zstd frame that declares more content than the
// block header's raw size, before any memory is allocated for it.
func (r *Reader) checkZstdSize(b []byte, raw uint32) error {
	var fh zstd.Header
	if err := fh.Decode(b); err != nil {
		return fmt.Errorf("bad zstd frame header: %v", err)
	}
	if fh.HasFCS && fh.FrameContentSize != uint64(raw) {
		return fmt.Errorf("zstd frame declares %d bytes, header says %d", fh.FrameContentSize, raw)
	}
	return nil
}

// zeroTail returns the offset of the run of zero bytes that ends the file
// (the file's size when its last byte is not zero). A crash can leave such
// a tail: file systems may extend a file before its data reaches the disk,
// by whole pages, wherever blocks begin. A block that fails its checks and
// holds the start of that run is taken as cut short there, not corrupt.
func (r *Reader) zeroTail() int64 {
	if r.zeroKnown {
		return r.zeroFrom
	}
	r.zeroKnown, r.zeroFrom = true, r.size
	buf := make([]byte, 64<<10)
	for r.zeroFrom > 0 {
		b := buf[:min(int64(len(buf)), r.zeroFrom)]
		if n, _ := r.ra.ReadAt(b, r.zeroFrom-int64(len(b))); n < len(b) {
			break // unreadable: no zero bytes known before here
		}
		i := len(b) - 1
		for i >= 0 && b[i] == 0 {
			i--
		}
		r.zeroFrom -= int64(len(b) - 1 - i)
		if i >= 0 {
			break
		}
	}
	return r.zeroFrom
}

// zeroReason says why a trace whose zero tail starts at z counts as cut
// short at the block at off.
func zeroReason(z, off int64) string {
	if z <= off {
		return "the file ends in zero bytes where a block should start"
	}
	return fmt.Sprintf("the file ends in zero bytes from byte %d on, inside the block at byte %d", z, off)
}

// readAt reads len(p) bytes at off. A full read is a success even with
// io.EOF (which io.ReaderAt allows at the end of the input), and so is an
// empty one at the end of the file (an empty payload).
func (r *Reader) readAt(p []byte, off int64) error {
	n, err := r.ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %s at byte %d: %w", r.name, off, err)
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// Name returns the name the reader was opened with.
func (r *Reader) Name() string { return r.name }

// Size returns the trace's size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Header returns the trace header (empty if the trace was cut inside it).
func (r *Reader) Header() *tracepb.Header { return r.header }

// Tables returns the static tables read so far. After Next has returned
// io.EOF, or after a seek, they cover every event read.
func (r *Reader) Tables() *Tables { return r.tables }

// Footer returns the footer, or nil while it has not been read or when the
// trace was cut short. For a whole trace it is available from Open on.
func (r *Reader) Footer() *tracepb.Footer { return r.footer }

// End says whether the trace is whole or cut short. It is final once Next
// has returned io.EOF.
func (r *Reader) End() End { return r.end }

// Close releases the reader and closes the file it opened.
func (r *Reader) Close() error {
	r.dec.Close()
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Next returns the next event in global order, or io.EOF after the last
// one. The Event is reused by the next call.
func (r *Reader) Next() (*Event, error) {
	for r.bd.remaining() == 0 {
		if r.err != nil {
			return nil, r.err
		}
		if r.done {
			return nil, io.EOF
		}
		if err := r.readNextBlock(); err != nil {
			r.err = err
			return nil, err
		}
	}
	if err := r.bd.next(&r.ev); err != nil {
		r.bd.clear() // stop walking this batch
		r.err = r.formatErr(r.index[r.blockNo-1].Offset, r.blockNo-1, "%v", err)
		return nil, r.err
	}
	return &r.ev, nil
}

// readNextBlock reads the block at r.off and acts on it.
func (r *Reader) readNextBlock() error {
	off, no := r.off, r.blockNo
	h, payload, ok, err := r.readBlockAt(off, no)
	if err != nil || !ok {
		return err
	}
	ref := BlockRef{Offset: off, Kind: h.Kind, Size: BlockHeaderSize + int64(h.StoredSize), FirstSeq: h.FirstSeq, Events: h.Events}
	if r.indexWhole && (no < len(r.index) && r.index[no] != ref || no >= len(r.index) && h.Kind != BlockFooter) {
		return r.formatErr(off, no, "%s block does not match the footer's index", h.Kind)
	}
	switch h.Kind {
	case BlockHeaderKind:
		return r.formatErr(off, no, "a second header block")
	case BlockTables:
		if !r.tablesLoaded[off] {
			t := &tracepb.Tables{}
			if err := proto.Unmarshal(payload, t); err != nil {
				return r.formatErr(off, no, "decode tables: %v", err)
			}
			if err := r.tables.Add(t); err != nil {
				return r.formatErr(off, no, "tables: %v", err)
			}
			r.tablesLoaded[off] = true
		}
	case BlockEvents:
		if h.FirstSeq != r.nextSeq {
			return r.formatErr(off, no, "events block starts at sequence number %d, want %d", h.FirstSeq, r.nextSeq)
		}
		if h.Events == 0 {
			return r.formatErr(off, no, "events block with no events")
		}
		if err := r.bd.parse(payload); err != nil {
			return r.formatErr(off, no, "decode events: %v", err)
		}
		if err := r.bd.start(h.FirstSeq, h.Events); err != nil {
			return r.formatErr(off, no, "%v", err)
		}
		r.nextSeq += uint64(h.Events)
	case BlockFooter:
		if err := r.readFooter(off, no, h, payload); err != nil {
			return err
		}
	}
	if !r.indexWhole && no == len(r.index) && h.Kind != BlockFooter {
		r.addIndex(ref) // the index is of the blocks before the footer, as the footer's is
	}
	r.off = off + ref.Size
	r.blockNo++
	return nil
}

// readFooter decodes and checks the footer met in sequence at off, and the
// trailer after it.
func (r *Reader) readFooter(off int64, no int, h BlockHeader, payload []byte) error {
	f := &tracepb.Footer{}
	if err := proto.Unmarshal(payload, f); err != nil {
		return r.formatErr(off, no, "decode footer: %v", err)
	}
	if f.EventCount != r.nextSeq {
		return r.formatErr(off, no, "footer counts %d events, the trace holds %d", f.EventCount, r.nextSeq)
	}
	if len(f.Frames) != no {
		return r.formatErr(off, no, "footer indexes %d blocks, the trace has %d before it", len(f.Frames), no)
	}
	idx, err := footerIndex(f, off)
	if err != nil {
		return r.formatErr(off, no, "%v", err)
	}
	for i, b := range idx {
		if i < len(r.index) && b != r.index[i] {
			return r.formatErr(off, no, "footer's index says block %d is a %s block of %d bytes (events %d+%d), the trace has a %s block of %d bytes (events %d+%d)",
				i, b.Kind, b.Size, b.FirstSeq, b.Events, r.index[i].Kind, r.index[i].Size, r.index[i].FirstSeq, r.index[i].Events)
		}
	}
	end := off + BlockHeaderSize + int64(h.StoredSize)
	switch rest := r.size - end; {
	case rest < TrailerSize:
		r.footer = f
		r.truncate(end, "the file ends inside the trailer")
		return nil
	case r.zeroTail() <= end:
		r.footer = f
		r.truncate(end, "the file ends in zero bytes where the trailer should be")
		return nil
	case rest > TrailerSize:
		return r.formatErr(end, -1, "%d bytes after the footer, want a %d-byte trailer", rest, TrailerSize)
	}
	tr := make([]byte, TrailerSize)
	if err := r.readAt(tr, end); err != nil {
		return err
	}
	if [8]byte(tr[8:]) != TrailerMagic || int64(binary.LittleEndian.Uint64(tr)) != off {
		return r.formatErr(end, -1, "bad trailer (want footer offset %d and magic %q)", off, TrailerMagic[:])
	}
	r.footer = f
	r.done = true
	r.end = End{Whole: true, TruncatedAt: r.size, Size: r.size}
	return nil
}

func (r *Reader) addIndex(b BlockRef) {
	if !r.indexWhole {
		r.index = append(r.index, b)
	}
}

// Blocks returns the blocks of the trace, scanning block headers (not
// payloads) when the trace has no usable footer. For a trace cut short the
// list ends at the last whole block. Scanning stops at the first corrupt
// block header, returning the error with the blocks before it.
func (r *Reader) Blocks() ([]BlockRef, error) {
	if r.indexWhole {
		return r.index, nil
	}
	// Extend the index past what sequential reading has seen.
	off := PreambleSize + int64(0)
	if n := len(r.index); n > 0 {
		off = r.index[n-1].Offset + r.index[n-1].Size
	}
	var seq uint64
	for _, b := range r.index {
		seq += uint64(b.Events)
	}
	hb := make([]byte, BlockHeaderSize)
	for r.size-off >= BlockHeaderSize {
		if err := r.readAt(hb, off); err != nil {
			return r.index, err
		}
		h, err := decodeBlockHeader(hb)
		if err != nil {
			if r.zeroTail() < off+BlockHeaderSize {
				break // cut short by a crash, as readBlockAt decides
			}
			return r.index, r.formatErr(off, len(r.index), "%v", err)
		}
		size := BlockHeaderSize + int64(h.StoredSize)
		if off+size > r.size || h.Kind == BlockFooter {
			break
		}
		if r.zeroTail() < off+size {
			// The zero tail starts inside this block: it is whole only if
			// its payload is.
			p := make([]byte, h.StoredSize)
			if err := r.readAt(p, off+BlockHeaderSize); err != nil {
				return r.index, err
			}
			if checksum(p) != h.PayloadCRC {
				break
			}
		}
		// What readNextBlock checks of block headers in sequence.
		switch {
		case h.Kind == BlockHeaderKind:
			return r.index, r.formatErr(off, len(r.index), "a second header block")
		case h.Kind == BlockEvents && h.Events == 0:
			return r.index, r.formatErr(off, len(r.index), "events block with no events")
		case h.Kind == BlockEvents && h.FirstSeq != seq:
			return r.index, r.formatErr(off, len(r.index), "events block starts at sequence number %d, want %d", h.FirstSeq, seq)
		}
		r.index = append(r.index, BlockRef{Offset: off, Kind: h.Kind, Size: size, FirstSeq: h.FirstSeq, Events: h.Events})
		off += size
		seq += uint64(h.Events)
	}
	return r.index, nil
}

// SeekSeq positions the reader so that Next returns the event with
// sequence number seq (or io.EOF when the trace has fewer events). It loads
// every TABLES block before that event's block, so Tables covers it, and
// decodes only that one EVENTS block.
func (r *Reader) SeekSeq(seq uint64) error {
	if r.err != nil {
		return r.err
	}
	blocks, berr := r.Blocks()
	// The EVENTS block holding seq, or len(blocks) when seq is past the end.
	j := len(blocks)
	for i, b := range blocks {
		if b.Kind == BlockEvents && seq < b.FirstSeq+uint64(b.Events) {
			j = i
			break
		}
	}
	if berr != nil && j == len(blocks) {
		return berr // seq is not before the damage
	}
	for k := 0; k < j; k++ {
		if blocks[k].Kind == BlockTables && !r.tablesLoaded[blocks[k].Offset] {
			if err := r.readBlockNo(blocks, k); err != nil {
				return err
			}
		}
	}
	if j == len(blocks) {
		// Past the last event: go on after the last block so that Next
		// reports the end (footer or truncation) as usual.
		r.bd.clear()
		if len(blocks) == 0 {
			return nil // cut inside the preamble or the header block: Next says io.EOF
		}
		r.nextSeq = 0
		for _, b := range blocks {
			r.nextSeq += uint64(b.Events)
		}
		last := blocks[len(blocks)-1]
		r.off, r.blockNo = last.Offset+last.Size, len(blocks)
		r.done = false
		return nil
	}
	r.nextSeq = blocks[j].FirstSeq
	if err := r.readBlockNo(blocks, j); err != nil {
		return err
	}
	for skip := seq - blocks[j].FirstSeq; skip > 0; skip-- {
		if _, err := r.Next(); err != nil {
			return err
		}
	}
	return nil
}

// readBlockNo reads block k of blocks as the next block.
func (r *Reader) readBlockNo(blocks []BlockRef, k int) error {
	r.off, r.blockNo = blocks[k].Offset, k
	r.bd.clear()
	r.done = false
	if err := r.readNextBlock(); err != nil {
		r.err = err
		return err
	}
	return nil
}
