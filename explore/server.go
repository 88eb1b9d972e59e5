package explore

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// NewHandler serves the explorer: the JSON API under /api/ over the
// session's models, and the web application's assets at / and /static/.
func NewHandler(s *Session, assets fs.FS) http.Handler {
	mux := http.NewServeMux()
	api := func(path string, fn func(q *query) (any, error)) {
		mux.HandleFunc("/api/"+path, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				writeError(w, r, http.StatusMethodNotAllowed, "only GET is served")
				return
			}
			defer func() {
				if p := recover(); p != nil {
					writeError(w, r, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p))
				}
			}()
			q := &query{r: r}
			v, err := fn(q)
			if err == nil {
				err = q.err
			}
			if err != nil {
				status := http.StatusInternalServerError
				var nf notFound
				switch {
				case errors.Is(err, errBadRequest):
					status = http.StatusBadRequest
				case errors.As(err, &nf):
					status = http.StatusNotFound
				case errors.Is(err, errBuilding):
					status = http.StatusServiceUnavailable
					w.Header().Set("Retry-After", "1")
				}
				writeError(w, r, status, err.Error())
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			writeJSON(w, r, http.StatusOK, v)
		})
	}
	api("run", func(q *query) (any, error) { return s.Run(), nil })
	api("timeline", func(q *query) (any, error) {
		from, to, n := q.uint("from", 0), q.uint("to", 0), q.uint("buckets", 0)
		if q.err != nil {
			return nil, q.err
		}
		if n > 5000 {
			return nil, badf("buckets %d: want 1 to 5000", n)
		}
		return s.Timeline(from, to, int(n))
	})
	api("graph", func(q *query) (any, error) {
		ts, limit := q.uint("ts", ^uint64(0)), q.uint("limit", 0)
		if q.err != nil {
			return nil, q.err
		}
		if ts > 1<<32-1 {
			ts = 1<<32 - 1
		}
		if limit > maxLimit {
			return nil, badf("limit %d: want 1 to %d", limit, maxLimit)
		}
		var expand []string
		if e := q.r.URL.Query().Get("expand"); e != "" {
			expand = strings.Split(e, ",")
		}
		return s.Graph(uint32(ts), expand, int(limit))
	})
	api("moment", func(q *query) (any, error) {
		m, err := s.Moment(q.r.URL.Query().Get("at"))
		if err != nil {
			return nil, badf("%v", err)
		}
		return m, nil
	})
	api("node", func(q *query) (any, error) {
		if !q.has("id") {
			return nil, badf("no node id given (id=N)")
		}
		id, after := q.uint("id", 0), q.uint("after", 0)
		if q.err != nil {
			return nil, q.err
		}
		if id > 1<<32-1 || after > 1<<31 {
			return nil, badf("id or after out of range")
		}
		return s.Node(uint32(id), int(after))
	})
	api("files", func(q *query) (any, error) { return s.Files(), nil })
	api("source", func(q *query) (any, error) { return s.Source(q.r.URL.Query().Get("file")) })
	api("findings", func(q *query) (any, error) { return s.Findings(), nil })
	api("state", func(q *query) (any, error) {
		sq, err := parseStateQuery(q)
		if err != nil {
			return nil, err
		}
		return s.State(sq)
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, fmt.Sprintf("no API endpoint %s", r.URL.Path))
	})
	files := http.FileServerFS(assets)
	mux.Handle("/static/", cacheAssets(http.StripPrefix("/static/", files), "public, max-age=3600"))
	mux.Handle("/", cacheAssets(files, "no-cache"))
	return mux
}

// notFound is an error for a thing that does not exist.
type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

// cacheAssets sets the caching headers of the assets and gzips them when
// asked.
func cacheAssets(h http.Handler, cache string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", cache)
		if !acceptsGzip(r) || r.Header.Get("Range") != "" {
			h.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		defer gw.close()
		h.ServeHTTP(gw, r)
	})
}

// gzipWriter compresses a response on its way out.
type gzipWriter struct {
	http.ResponseWriter
	zw      *gzip.Writer
	started bool
	plain   bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.started {
		g.started = true
		h := g.Header()
		if code != http.StatusOK || h.Get("Content-Encoding") != "" {
			g.plain = true
		} else {
			h.Del("Content-Length")
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.started {
		g.WriteHeader(http.StatusOK)
	}
	if g.plain {
		return g.ResponseWriter.Write(b)
	}
	if g.zw == nil {
		g.zw = gzipPool.Get().(*gzip.Writer)
		g.zw.Reset(g.ResponseWriter)
	}
	return g.zw.Write(b)
}

func (g *gzipWriter) close() {
	if g.zw != nil {
		g.zw.Close()
		gzipPool.Put(g.zw)
	}
}

var gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed); return w }}

// acceptsGzip says whether the client takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if enc, _, _ := strings.Cut(strings.TrimSpace(part), ";"); enc == "gzip" {
			return true
		}
	}
	return false
}

// writeJSON writes v as JSON, gzipped when the client takes it.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": "encode: " + err.Error()})
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if len(b) > 1024 && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(status)
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(w)
		zw.Write(b)
		zw.Close()
		gzipPool.Put(zw)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

// writeError answers {"error": msg}.
func writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	msg = strings.ReplaceAll(msg, "\n", " ")
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, status, map[string]string{"error": msg})
}

// query reads a request's query parameters, keeping the first error.
type query struct {
	r   *http.Request
	err error
}

func (q *query) has(name string) bool { return q.r.URL.Query().Has(name) }

// uint reads a non-negative integer parameter.
func (q *query) uint(name string, def uint64) uint64 {
	v := q.r.URL.Query().Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		if q.err == nil {
			q.err = badf("%s=%q: want a non-negative integer", name, v)
		}
		return def
	}
	return n
}
