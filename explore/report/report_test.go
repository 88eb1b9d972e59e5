package report

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// loadFixture reads testdata/fixture.json, models written by hand from
// explore/model.go.
func loadFixture(t *testing.T) *Data {
	t.Helper()
	b, err := os.ReadFile("testdata/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var d Data
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return &d
}

// fixtureAPI answers the explorer's HTTP API from d, as explore.NewHandler
// would for the run d was made from.
func fixtureAPI(d *Data) http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v any, ok bool) {
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": "not in the fixture"})
			return
		}
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/api/run", func(w http.ResponseWriter, r *http.Request) { reply(w, d.Run, true) })
	mux.HandleFunc("/api/timeline", func(w http.ResponseWriter, r *http.Request) { reply(w, d.Timeline, true) })
	mux.HandleFunc("/api/findings", func(w http.ResponseWriter, r *http.Request) { reply(w, d.Findings, true) })
	mux.HandleFunc("/api/files", func(w http.ResponseWriter, r *http.Request) { reply(w, d.Files, true) })
	mux.HandleFunc("/api/graph", func(w http.ResponseWriter, r *http.Request) {
		g, ok := d.Graphs[r.URL.Query().Get("ts")]
		reply(w, g, ok)
	})
	mux.HandleFunc("/api/node", func(w http.ResponseWriter, r *http.Request) {
		n, ok := d.Nodes[r.URL.Query().Get("id")]
		reply(w, n, ok)
	})
	mux.HandleFunc("/api/source", func(w http.ResponseWriter, r *http.Request) {
		s, ok := d.Sources[r.URL.Query().Get("file")]
		reply(w, s, ok)
	})
	return mux
}

func TestCollect(t *testing.T) {
	want := loadFixture(t)
	got, err := Collect(fixtureAPI(want), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The initial moment (ts 3) with ts 2 before it, the crash (ts 4).
	var keys []string
	for k := range got.Graphs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"2", "3", "4"}) {
		t.Errorf("graphs at %v, want [2 3 4]", keys)
	}
	// Node 2 is marked at ts 3: its history is in.
	if _, ok := got.Nodes["2"]; !ok || len(got.Nodes) != 1 {
		t.Errorf("node histories %v, want node 2's only", got.Nodes)
	}
	if _, ok := got.Sources["testdata/programs/list.c"]; !ok || len(got.Sources) != 1 {
		t.Errorf("sources: %d files, want list.c only", len(got.Sources))
	}
	if !got.HasFindings() {
		t.Error("HasFindings false on a run with a violation, a fault and a crash")
	}
	if len(got.Notes) != 0 {
		t.Errorf("notes %q on a small run", got.Notes)
	}
}

func TestCollectCaps(t *testing.T) {
	d := loadFixture(t)
	got, err := Collect(fixtureAPI(d), Options{Moments: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Graphs) != 2 || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "1 of the 2 timestamps") {
		t.Errorf("with Moments 1: %d graphs, notes %q; want 2 graphs and a note", len(got.Graphs), got.Notes)
	}
}

func TestCollectError(t *testing.T) {
	d := loadFixture(t)
	d.Run.Initial.TS = 7 // no graph there
	_, err := Collect(fixtureAPI(d), Options{})
	if err == nil || !strings.Contains(err.Error(), "/api/graph?") || !strings.Contains(err.Error(), "not in the fixture") {
		t.Errorf("err = %v, want the graph request's error", err)
	}
}

func TestWriteSelfContained(t *testing.T) {
	d := loadFixture(t)
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{` src="`, `<link `, `href="static/`, `</script` + "\n</script"} {
		if strings.Contains(page, bad) {
			t.Errorf("report page contains %q: not self-contained", bad)
		}
	}
	for _, want := range []string{"<style>", "dagre", `window.mgtrace`, dataTag} {
		if !strings.Contains(page, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	// The embedded models read back as they went in.
	i := strings.Index(page, dataTag)
	j := strings.Index(page[i:], "</script>")
	var back Data
	if err := json.Unmarshal([]byte(page[i+len(dataTag):i+j]), &back); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	b1, _ := json.Marshal(&back)
	b2, _ := json.Marshal(d)
	if !bytes.Equal(b1, b2) {
		t.Error("embedded data differs from what was written")
	}
	if dir := os.Getenv("MGTRACE_REPORT_OUT"); dir != "" {
		os.WriteFile(filepath.Join(dir, "fixture-report.html"), buf.Bytes(), 0o644)
	}
}

func TestWriteEscapesScript(t *testing.T) {
	d := loadFixture(t)
	d.Run.Program = `</script><script>alert(1)</script>`
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "alert(1)</script>") {
		t.Error("a program name closed the data's script element")
	}
}
