package schema

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the version of the container and message format this
// package writes and reads. Readers reject other versions.
const FormatVersion = 1

// Magic is the first 8 bytes of every trace file. The high byte and the
// CR-LF/EOF bytes catch files mangled by text-mode transfers, as PNG's do.
var Magic = [8]byte{0x89, 'M', 'G', 'T', '\r', '\n', 0x1a, '\n'}

// TrailerMagic is the last 8 bytes of a whole trace file.
var TrailerMagic = [8]byte{'M', 'G', 'T', 'E', 'N', 'D', 0, 1}

// blockMagic starts every block header.
var blockMagic = [4]byte{'M', 'G', 'B', 'K'}

// Sizes of the fixed parts of a file.
const (
	PreambleSize    = 16 // Magic, format version (u32), flags (u32, 0)
	BlockHeaderSize = 36 // see BlockHeader
	TrailerSize     = 16 // footer offset (u64), TrailerMagic
)

// Limits checked on every size read from a file before memory is allocated
// for it. Writers stay well below them.
const (
	MaxStoredSize     = 64 << 20  // compressed payload of one block
	MaxRawSize        = 256 << 20 // decompressed payload of one block
	MaxEventsPerBlock = 1 << 24
)

// maxZstdRatio bounds the raw size of a zstd block by its stored size: no
// zstd frame regenerates more than 32768 bytes per byte (its densest block,
// RLE, takes 4 bytes for 128 KiB), so a raw size above that is a lie, and
// the reader allocates no more than the file can justify.
const maxZstdRatio = 1 << 15

// BlockKind says which message a block holds.
type BlockKind uint8

// The block kinds.
const (
	BlockHeaderKind BlockKind = 1 // tracepb.Header
	BlockTables     BlockKind = 2 // tracepb.Tables
	BlockEvents     BlockKind = 3 // tracepb.EventBatch
	BlockFooter     BlockKind = 4 // tracepb.Footer
)

// String names the block kind.
func (k BlockKind) String() string {
	switch k {
	case BlockHeaderKind:
		return "header"
	case BlockTables:
		return "tables"
	case BlockEvents:
		return "events"
	case BlockFooter:
		return "footer"
	}
	return fmt.Sprintf("block-kind(%d)", uint8(k))
}

// Codecs of block payloads.
const (
	codecNone = 0
	codecZstd = 1
)

// BlockHeader is the fixed 36-byte header in front of every block payload.
// All integers are little-endian.
//
//	offset size field
//	0      4    "MGBK"
//	4      1    kind (BlockKind)
//	5      1    codec (0 none, 1 zstd)
//	6      2    reserved, 0
//	8      4    stored size: payload bytes that follow the header
//	12     4    raw size: payload bytes after decompression
//	16     8    first sequence number (EVENTS; else 0)
//	24     4    event count (EVENTS; else 0)
//	28     4    CRC-32C of the stored payload
//	32     4    CRC-32C of bytes 0..31 of this header
//
// A block ends exactly stored size bytes after its header; the next block, or
// the trailer, starts there.
type BlockHeader struct {
	Kind       BlockKind
	Codec      uint8
	StoredSize uint32
	RawSize    uint32
	FirstSeq   uint64
	Events     uint32
	PayloadCRC uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// encode writes h into b[:BlockHeaderSize].
func (h *BlockHeader) encode(b []byte) {
	_ = b[BlockHeaderSize-1]
	copy(b[0:4], blockMagic[:])
	b[4] = byte(h.Kind)
	b[5] = h.Codec
	b[6], b[7] = 0, 0
	binary.LittleEndian.PutUint32(b[8:], h.StoredSize)
	binary.LittleEndian.PutUint32(b[12:], h.RawSize)
	binary.LittleEndian.PutUint64(b[16:], h.FirstSeq)
	binary.LittleEndian.PutUint32(b[24:], h.Events)
	binary.LittleEndian.PutUint32(b[28:], h.PayloadCRC)
	binary.LittleEndian.PutUint32(b[32:], checksum(b[:32]))
}

// decodeBlockHeader parses and checks b[:BlockHeaderSize].
func decodeBlockHeader(b []byte) (BlockHeader, error) {
	var h BlockHeader
	if [4]byte(b[0:4]) != blockMagic {
		return h, fmt.Errorf("bad block magic %q, want %q", b[0:4], blockMagic[:])
	}
	if got, want := binary.LittleEndian.Uint32(b[32:]), checksum(b[:32]); got != want {
		return h, fmt.Errorf("block header checksum mismatch (stored %#08x, computed %#08x)", got, want)
	}
	h.Kind = BlockKind(b[4])
	h.Codec = b[5]
	h.StoredSize = binary.LittleEndian.Uint32(b[8:])
	h.RawSize = binary.LittleEndian.Uint32(b[12:])
	h.FirstSeq = binary.LittleEndian.Uint64(b[16:])
	h.Events = binary.LittleEndian.Uint32(b[24:])
	h.PayloadCRC = binary.LittleEndian.Uint32(b[28:])
	switch {
	case h.Kind < BlockHeaderKind || h.Kind > BlockFooter:
		return h, fmt.Errorf("unknown block kind %d", h.Kind)
	case h.Codec != codecNone && h.Codec != codecZstd:
		return h, fmt.Errorf("unknown block codec %d", h.Codec)
	case b[6] != 0 || b[7] != 0:
		return h, fmt.Errorf("reserved block header bytes are %#x %#x, want 0", b[6], b[7])
	case h.StoredSize > MaxStoredSize:
		return h, fmt.Errorf("block stored size %d, maximum is %d", h.StoredSize, MaxStoredSize)
	case h.RawSize > MaxRawSize:
		return h, fmt.Errorf("block raw size %d, maximum is %d", h.RawSize, MaxRawSize)
	case h.Codec == codecNone && h.RawSize != h.StoredSize:
		return h, fmt.Errorf("uncompressed block has raw size %d but stored size %d", h.RawSize, h.StoredSize)
	case h.Codec == codecZstd && uint64(h.RawSize) > uint64(h.StoredSize)*maxZstdRatio:
		return h, fmt.Errorf("block raw size %d is more than %d bytes of zstd can hold", h.RawSize, h.StoredSize)
	case h.Events > MaxEventsPerBlock:
		return h, fmt.Errorf("block holds %d events, maximum is %d", h.Events, MaxEventsPerBlock)
	case h.Kind != BlockEvents && (h.Events != 0 || h.FirstSeq != 0):
		return h, fmt.Errorf("%s block has event range %d+%d, want none", h.Kind, h.FirstSeq, h.Events)
	}
	return h, nil
}

// encodePreamble returns the 16 bytes that start a trace file.
func encodePreamble() []byte {
	b := make([]byte, PreambleSize)
	copy(b, Magic[:])
	binary.LittleEndian.PutUint32(b[8:], FormatVersion)
	return b
}

// checkPreamble validates the first 16 bytes of a file.
func checkPreamble(b []byte) error {
	if [8]byte(b[:8]) != Magic {
		return fmt.Errorf("not an mgtrace trace (bad magic %q)", b[:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != FormatVersion {
		return fmt.Errorf("unsupported trace format version %d (this build reads version %d)", v, FormatVersion)
	}
	if f := binary.LittleEndian.Uint32(b[12:]); f != 0 {
		return fmt.Errorf("unknown format flags %#x", f)
	}
	return nil
}

func encodeTrailer(footerOffset uint64) []byte {
	b := make([]byte, TrailerSize)
	binary.LittleEndian.PutUint64(b, footerOffset)
	copy(b[8:], TrailerMagic[:])
	return b
}
