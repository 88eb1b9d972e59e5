package histfile

import (
	"github.com/mgtrace/mgtrace/lin"
)

// linValue converts an EDN form to a lin.Value: nil, booleans, integers
// and strings as themselves, keywords as strings that keep their colon
// (":timed-out"), symbols and characters as strings, vectors, lists and
// sets as lists. Maps, floats, ratios and integers beyond 64 bits have no
// lin.Value; what is the field being converted (":value"), for the error.
func (r *ednReader) linValue(v *ednValue, what string) (lin.Value, error) {
	switch v.kind {
	case ednNil:
		return lin.Value{}, nil
	case ednBool:
		return lin.BoolValue(v.i != 0), nil
	case ednInt:
		return lin.IntValue(v.i), nil
	case ednString, ednChar, ednSymbol:
		return lin.StringValue(v.s), nil
	case ednKeyword:
		return lin.StringValue(":" + v.s), nil
	case ednNumber:
		return lin.Value{}, errorf(r.name, v.line, v.col, "%s holds the number %s: only integers that fit 64 bits are supported", what, v.s)
	case ednVector, ednList, ednSet:
		l := make([]lin.Value, len(v.items))
		for i := range v.items {
			e, err := r.linValue(&v.items[i], what)
			if err != nil {
				return lin.Value{}, err
			}
			l[i] = e
		}
		return lin.ListValue(l...), nil
	}
	return lin.Value{}, errorf(r.name, v.line, v.col, "%s holds %s: a value must be nil, a boolean, an integer, a string, a keyword or a vector of those", what, v.kind.article())
}
