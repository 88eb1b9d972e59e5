package histfile

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

// benchHistory returns n write operations by 50 clients, one after the
// other, in format f.
func benchHistory(b *testing.B, n int, f Format) []byte {
	h := &lin.History{Ops: make([]lin.Op, n)}
	for i := range h.Ops {
		h.Ops[i] = lin.Op{Client: i % 50, Name: "write", Input: lin.IntValue(int64(i)), Call: int64(2 * i), Return: int64(2*i + 1)}
	}
	var buf bytes.Buffer
	switch f {
	case JSON:
		if err := WriteJSON(&buf, h); err != nil {
			b.Fatal(err)
		}
	case EDN:
		if err := WriteEDN(&buf, h); err != nil {
			b.Fatal(err)
		}
	case EtcdLog:
		for i := range h.Ops {
			fmt.Fprintf(&buf, "INFO  jepsen.util - %d\t:invoke\t:write\t%d\n", i%50, i)
			fmt.Fprintf(&buf, "INFO  jepsen.util - %d\t:ok\t:write\t%d\n", i%50, i)
		}
	}
	return buf.Bytes()
}

// BenchmarkParse parses 20,000 operations in each format.
func BenchmarkParse(b *testing.B) {
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			data := benchHistory(b, 20000, f)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, err := Parse("bench", data, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
