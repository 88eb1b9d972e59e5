package histfile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/mgtrace/mgtrace/lin"
)

// WriteJSON writes h in the JSON format, one operation per line. It
// leaves out what is Nil (key, input, output), the status when it is ok,
// and the return position of info and pending operations. Sources and
// h.Dropped have no place in the format.
func WriteJSON(w io.Writer, h *lin.History) error {
	bw := bufio.NewWriter(w)
	var b []byte
	b = append(b, '{')
	if h.Model != "" {
		b = append(b, `"model": `...)
		b = appendJSONString(b, h.Model)
		b = append(b, ", "...)
	}
	if !h.Init.IsNil() {
		b = append(b, `"init": `...)
		var err error
		if b, err = appendJSONValue(b, h.Init); err != nil {
			return fmt.Errorf("writing the initial state: %w", err)
		}
		b = append(b, ", "...)
	}
	b = append(b, `"ops": [`...)
	for i := range h.Ops {
		o := &h.Ops[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  {\"client\": "...)
		b = strconv.AppendInt(b, int64(o.Client), 10)
		b = append(b, `, "f": `...)
		b = appendJSONString(b, o.Name)
		for _, f := range [...]struct {
			name string
			v    lin.Value
		}{{"key", o.Key}, {"input", o.Input}, {"output", o.Output}} {
			if f.v.IsNil() {
				continue
			}
			b = append(b, ", \""+f.name+"\": "...)
			var err error
			if b, err = appendJSONValue(b, f.v); err != nil {
				return fmt.Errorf("writing operation %d: %w", i, err)
			}
		}
		if o.Status != lin.OK {
			b = append(b, `, "status": "`...)
			b = append(b, o.Status.String()...)
			b = append(b, '"')
		}
		b = append(b, `, "call": `...)
		b = strconv.AppendInt(b, o.Call, 10)
		if o.Return != lin.Never {
			b = append(b, `, "return": `...)
			b = strconv.AppendInt(b, o.Return, 10)
		}
		b = append(b, '}')
		if _, err := bw.Write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	if len(h.Ops) > 0 {
		b = append(b, '\n')
	}
	b = append(b, "]}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// appendJSONValue appends v as JSON.
func appendJSONValue(b []byte, v lin.Value) ([]byte, error) {
	q, err := v.MarshalJSON()
	if err != nil {
		return b, err
	}
	return append(b, q...), nil
}
