package explore

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestHandler asks the API good and bad questions on a recorded list:
// every answer is JSON, errors are 4xx with {"error": ...}, nothing
// panics.
func TestHandler(t *testing.T) {
	bin := testprog.Build(t, "list")
	trace := testprog.Record(t, bin, "50")
	s := open(t, trace, Options{})
	assets := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>x</title>")}, "app.js": {Data: []byte(strings.Repeat("let a = 1;\n", 500))}}
	h := NewHandler(s, assets)
	for _, c := range []struct {
		url    string
		status int
		want   string // a substring of the body
	}{
		{"/api/run", 200, `"model_version":1`},
		{"/api/run?x=1", 200, `"initial"`},
		{"/api/timeline", 200, `"threads"`},
		{"/api/timeline?from=10&to=99&buckets=9", 200, `"width":10`},
		{"/api/timeline?from=100&to=10", 400, `"error"`},
		{"/api/timeline?buckets=0", 200, `"changes"`},
		{"/api/timeline?buckets=100000", 400, `buckets`},
		{"/api/timeline?from=-1", 400, `from`},
		{"/api/timeline?to=99999999999999999999999", 400, `to`},
		{"/api/graph", 200, `"total_nodes"`},
		{"/api/graph?ts=0", 200, `"nodes":[]`},
		{"/api/graph?ts=5&limit=1", 200, `"at"`},
		{"/api/graph?ts=99999999999", 200, `"at"`},
		{"/api/graph?ts=x", 400, `ts=`},
		{"/api/graph?limit=-3", 400, `limit`},
		{"/api/graph?limit=99999999", 400, `limit`},
		{"/api/graph?ts=600&expand=,,a,&limit=2", 200, `"collapsed":true`},
		{"/api/moment?at=end", 200, `"ts"`},
		{"/api/moment?at=seq:10", 200, `"ts"`},
		{"/api/moment?at=cpoint:9", 400, `C-points`},
		{"/api/moment?at=bogus", 400, `moment`},
		{"/api/moment", 200, `"ts"`},
		{"/api/node?id=1", 200, `"events"`},
		{"/api/node?id=1&after=1000", 200, `"events":[]`},
		{"/api/node", 400, `id=N`},
		{"/api/node?id=0", 404, `no node`},
		{"/api/node?id=999999", 404, `no node`},
		{"/api/node?id=abc", 400, `id=`},
		{"/api/files", 200, `list.c`},
		{"/api/source?file=list.c", 200, `"available":true`},
		{"/api/source?file=nothere.c", 400, `no source file`},
		{"/api/source", 400, `no file`},
		{"/api/findings", 200, `"violations":[]`},
		{"/api/state?ts=600&node=1", 200, `"nodes"`},
		{"/api/state?at=end", 200, `"seq"`},
		{"/api/state?at=end&registers=1", 200, `"seq"`},
		{"/api/state?ts=600", 200, `"live"`},
		{"/api/state?ts=600&addr=0x1000&len=4", 200, `"memory"`},
		{"/api/state?ts=600&addr=zz", 400, `addr=`},
		{"/api/state?ts=600&len=4", 400, `len without addr`},
		{"/api/state?ts=600&node=1&global=x", 400, `one of`},
		{"/api/state?ts=600&node=0", 400, `node=`},
		{"/api/state?ts=600&node=99999", 404, `no node`},
		{"/api/state?ts=600&global=counter", 400, `global`},
		{"/api/state?ts=1&at=end", 400, `not both`},
		{"/api/state?at=cpoint:99", 400, `C-points`},
		{"/api/state?ts=600&addr=0x1000&len=999999999", 400, `len`},
		{"/api/nothing", 404, `no API endpoint`},
		{"/", 200, `<!doctype html>`},
		{"/static/app.js", 200, `let a`},
		{"/static/missing.js", 404, ``},
	} {
		t.Run(c.url, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", c.url, nil))
			body := rec.Body.String()
			if rec.Code != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("%s: %d %.300s; want %d with %q", c.url, rec.Code, body, c.status, c.want)
			}
			if strings.HasPrefix(c.url, "/api/") {
				if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("content type %q", ct)
				}
				var v map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
					t.Errorf("not JSON: %v", err)
				}
				if c.status >= 400 && (v["error"] == nil || strings.Contains(v["error"].(string), "\n")) {
					t.Errorf("error body %v", v)
				}
			}
		})
	}
	// POST is refused.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/run", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
	// gzip when asked, for the API and the assets; caching headers.
	for _, u := range []string{"/api/timeline?buckets=2000", "/static/app.js"} {
		req := httptest.NewRequest("GET", u, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: not gzipped (%v)", u, rec.Header())
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: gunzip: %v, %d bytes", u, err, len(b))
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/app.js", nil))
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age") {
		t.Errorf("asset Cache-Control %q", cc)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/run", nil))
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("API Cache-Control %q", cc)
	}
}
