package histfile

import (
	"bytes"
	"fmt"
	"os"

	"github.com/mgtrace/mgtrace/lin"
)

// Parse reads a history in format f from data; when f is "" it asks
// Detect. name is the file's name, used in Op.Source ("NAME:LINE") and in
// errors. The history is sorted (lin.History.Sort) and passes
// lin.History.Validate; its Source is name. Parse returns the format it
// read. A malformed input gives an *Error.
func Parse(name string, data []byte, f Format) (*lin.History, Format, error) {
	data = bytes.TrimPrefix(data, bom)
	if f == "" {
		if f = detect(data); f == "" {
			return nil, "", formatError(name, data)
		}
	}
	var (
		h   *lin.History
		err error
	)
	switch f {
	case JSON:
		h, err = parseJSON(name, data)
	case EDN:
		h, err = parseEDN(name, data)
	case EtcdLog:
		h, err = parseEtcdLog(name, data)
	default:
		return nil, "", &Error{Name: name, Msg: fmt.Sprintf("unknown history format %q (want json, edn or etcd-log)", string(f))}
	}
	if err != nil {
		return nil, f, err
	}
	h.Source = name
	h.Sort()
	if err := validate(name, h); err != nil {
		return nil, f, err
	}
	return h, f, nil
}

// ParseFile reads the file at path with Parse, naming it path.
func ParseFile(path string, f Format) (*lin.History, Format, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading history: %w", err)
	}
	return Parse(path, data, f)
}
