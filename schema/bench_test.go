package schema_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

func workloadEvents(n int) []schema.Event {
	w := tracetest.NewWorkload(1)
	evs := make([]schema.Event, n)
	for i := range evs {
		w.Next(&evs[i])
	}
	return evs
}

func BenchmarkWrite(b *testing.B) {
	evs := workloadEvents(1 << 20)
	var buf bytes.Buffer
	b.ResetTimer()
	var size int64
	for i := 0; i < b.N; i++ {
		buf.Reset()
		w, _ := schema.NewWriter(&buf, tracetest.Header("bench"), schema.WriterOptions{})
		for j := range evs {
			if err := w.Write(&evs[j]); err != nil {
				b.Fatal(err)
			}
		}
		w.Close(nil)
		size = int64(buf.Len())
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	b.ReportMetric(float64(size)/float64(len(evs)), "bytes/event")
}

func BenchmarkRead(b *testing.B) {
	evs := workloadEvents(1 << 20)
	data, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), "bench")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != len(evs) {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}
