package debuginfo

import (
	"debug/elf"
	"fmt"
)

// MaxFunctionCode is the size of the largest function whose machine code
// Code reads: 256 KiB.
const MaxFunctionCode = 256 << 10

// Code returns the machine code of the run-time range [low, high) as the
// file's PT_LOAD segments load it, read from the file: the byte at index
// i is the byte at run-time address low+i. The range must lie wholly
// within the file-backed part of one PT_LOAD segment (its p_filesz bytes:
// not .bss) and be at most MaxFunctionCode bytes long; Code returns an
// error otherwise, or when the read fails (the module was closed, the file
// was truncated). The error is for logging: a caller records the function
// without its code.
//
// The bytes are those of the file, not of memory: code patched at run time
// (text relocations, self-modifying code) differs.
func (m *Module) Code(low, high uint64) ([]byte, error) {
	if high <= low {
		return nil, fmt.Errorf("code of %s [%#x, %#x): empty range", m.path, low, high)
	}
	n := high - low
	if n > MaxFunctionCode {
		return nil, fmt.Errorf("code of %s [%#x, %#x): %d bytes, more than %d", m.path, low, high, n, MaxFunctionCode)
	}
	a := low - m.bias // link-time address
	var seg *elf.Prog
	for _, p := range m.elfFile.Progs {
		if p.Type == elf.PT_LOAD && a >= p.Vaddr && a-p.Vaddr <= p.Filesz && n <= p.Filesz-(a-p.Vaddr) {
			seg = p
			break
		}
	}
	if seg == nil {
		return nil, fmt.Errorf("code of %s [%#x, %#x): not in the file-backed part of a PT_LOAD segment", m.path, low, high)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("code of %s [%#x, %#x): module closed", m.path, low, high)
	}
	buf := make([]byte, n)
	if _, err := m.osFile.ReadAt(buf, int64(seg.Off+(a-seg.Vaddr))); err != nil {
		return nil, fmt.Errorf("code of %s [%#x, %#x): read at file offset %#x: %w", m.path, low, high, seg.Off+(a-seg.Vaddr), err)
	}
	return buf, nil
}
