package schema

// Helpers for the external tests (package schema_test) that craft trace
// files by hand.

// EncodeBlockHeaderForTest returns the 36 bytes of h with its header
// checksum.
func EncodeBlockHeaderForTest(h BlockHeader) []byte {
	b := make([]byte, BlockHeaderSize)
	h.encode(b)
	return b
}

// ChecksumForTest is the CRC-32C the container uses.
func ChecksumForTest(b []byte) uint32 { return checksum(b) }

// EncodePreambleForTest returns the 16 bytes that start a trace.
func EncodePreambleForTest() []byte { return encodePreamble() }

// EncodeTrailerForTest returns the 16-byte trailer pointing at footerOffset.
func EncodeTrailerForTest(footerOffset uint64) []byte { return encodeTrailer(footerOffset) }

// Block payload codecs.
const (
	CodecNoneForTest = codecNone
	CodecZstdForTest = codecZstd
)
