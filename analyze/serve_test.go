package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe starts analyze serve on a port of its own, asks its API, and
// stops it with SIGTERM as Ctrl-C would.
func TestServe(t *testing.T) {
	inTempDir(t)
	writeFixture(t, "good.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"serve", "--listen", "0", "good.trace"}, &out, &errb) }()
	urlRE := regexp.MustCompile(`^analyze: serving good.trace at (http://127\.0\.0\.1:[0-9]+/) \(Ctrl-C to stop\)\n`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(errb.String()); m != nil {
			base = m[1]
		}
		select {
		case st := <-done:
			t.Fatalf("serve ended with status %d: %s", st, errb.String())
		default:
		}
	}
	if base == "" {
		t.Fatalf("no URL printed: %q", errb.String())
	}
	resp, err := http.Get(base + "api/run")
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Events uint64 `json:"events"`
		Trace  string `json:"trace"`
	}
	err = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || run.Events == 0 || run.Trace != "good.trace" {
		t.Errorf("/api/run: %d %+v %v", resp.StatusCode, run, err)
	}
	// A request for another host name is refused (DNS rebinding).
	req, _ := http.NewRequest("GET", base+"api/run", nil)
	req.Host = "evil.example:80"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("request for another host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if st != 0 || !strings.HasSuffix(errb.String(), "analyze: stopped\n") || out.String() != "" {
			t.Errorf("status %d, stdout %q, stderr %q", st, out.String(), errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// TestServeUsage checks serve's bad command lines: exit status 2 and one
// line.
func TestServeUsage(t *testing.T) {
	inTempDir(t)
	writeFixture(t, "good.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	hint := "; run 'analyze serve --help'\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "analyze: missing trace file argument" + hint},
		{[]string{"serve", "a.trace", "b.trace"}, "analyze: want one trace file, got 2 arguments" + hint},
		{[]string{"serve", "--listen", "nohost", "good.trace"}, "analyze: --listen: \"nohost\": want host:port or a port" + hint},
		{[]string{"serve", "--listen", "127.0.0.1:http-ish", "good.trace"}, "analyze: --listen: \"127.0.0.1:http-ish\": bad port \"http-ish\"" + hint},
		{[]string{"serve", "--mode", "clever", "good.trace"}, "analyze: --mode: unknown mode \"clever\" (want agnostic or aware) (or auto)" + hint},
		{[]string{"serve", "--stages", "locate,magic", "good.trace"}, "analyze: --stages: unknown stage \"magic\" (want locate, bugs, slice, or none)" + hint},
		{[]string{"serve", "--scope", "most", "good.trace"}, "analyze: --scope: unknown scope \"most\" (want app or all)" + hint},
		{[]string{"serve", "--spec", "nothere.spec", "good.trace"}, "analyze: spec: stat nothere.spec: no such file or directory\n"},
		{[]string{"serve", "missing.trace"}, "analyze: open trace: open missing.trace: no such file or directory\n"},
	} {
		_, errOut, status := runAnalyze(t, c.args...)
		if status != exitError || errOut != c.want {
			t.Errorf("%v: status %d, stderr %q; want 2, %q", c.args, status, errOut, c.want)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"8080", "127.0.0.1:8080"},
		{"0", "127.0.0.1:0"},
		{":9000", "127.0.0.1:9000"},
		{"127.0.0.1:7", "127.0.0.1:7"},
		{"0.0.0.0:80", "0.0.0.0:80"},
		{"[::1]:80", "[::1]:80"},
		{"localhost:80", "localhost:80"},
	} {
		got, err := listenAddr(c.in)
		if err != nil || got != c.want {
			t.Errorf("listenAddr(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "host", "1.2.3.4:", "1.2.3.4:99999", "a:b:c"} {
		if got, err := listenAddr(in); err == nil {
			t.Errorf("listenAddr(%q) = %q, want an error", in, got)
		}
	}
}
