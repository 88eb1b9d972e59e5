package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/explore"
	"github.com/mgtrace/mgtrace/explore/web"
	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

const serveHelp = `
Serves a local web explorer of the run (docs/explore.md): a timeline of the
run that selects the moment; the MG++ memory graph at that moment (Vineet
Singh, Rajiv Gupta and Iulian Neamtiu, "MG++: Memory Graphs for Analyzing
Dynamic Data Structures", SANER 2015), large graphs collapsed by type and
allocation site and expanded on demand; a node's history; and the source
with per-line execution counts and the findings of the stages laid over
it: with --spec, the constraint violations (check) and the faulty
statements with the changes they made (locate); the memory-bug findings
with their value propagation chains (bugs; Yan Wang's dissertation,
"Dynamic Analysis Techniques for Effective and Efficient Debugging", UC
Riverside, 2014); when the run ended with a crash, the crash and its
backward slice (slice). Every view's moment and selection is in its URL,
to share.

The server answers at once: the trace's tables are read when it starts,
the graph and the stages are built in the background, and the views answer
for the part built so far. It listens on 127.0.0.1 (this machine only)
unless --listen names another host; on a loopback address it answers only
requests addressed to localhost, 127.0.0.1 or [::1], so that no web page
elsewhere can reach it through a DNS name pointed at this machine. It
prints its URL on stderr once listening; Ctrl-C stops it. Everything it
serves is embedded: no network is needed.

The JSON API (GET /api/run, /api/timeline, /api/graph, /api/moment,
/api/node, /api/files, /api/source, /api/findings, /api/state) is in
docs/explore.md.`

// serveFlags are the flags of analyze serve.
type serveFlags struct {
	spec, listen, mode, scope, stages string
	sourceDirs                        []string
	forceBugs                         bool
	bugsLimit                         uint64
}

// serveSetup defines the flags of analyze serve.
func serveSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &serveFlags{}
	fs.StringVar(&f.spec, "spec", "", "constraint spec `FILE` (docs/spec-language.md): check and locate run on it and their findings are shown")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "`ADDR` (host:port) to listen on; a port alone or port 0 (any free port) listens on 127.0.0.1")
	fs.StringArrayVar(&f.sourceDirs, "source-dir", nil, "where to read the program's source files: `DIR` (files looked for under it by their path and its trailing parts) or FROM=TO (paths starting with FROM read under TO); repeatable")
	fs.StringVar(&f.mode, "mode", "auto", "MG++ `MODE` as analyze mg takes it: aware, agnostic, or auto")
	fs.StringVar(&f.scope, "scope", "app", "MG++ `SCOPE` as analyze mg takes it: app or all")
	fs.StringVar(&f.stages, "stages", "locate,bugs,slice", "`LIST` of the stages to run after the graph, comma-separated: locate (needs --spec), bugs, slice (the crash's backward slice), or none")
	fs.BoolVar(&f.forceBugs, "force-bugs", false, "run the bugs stage whatever the trace's size (it is skipped above --bugs-limit events to bound memory)")
	fs.Uint64Var(&f.bugsLimit, "bugs-limit", explore.DefaultBugsLimit, "`N` events above which the bugs stage is skipped unless --force-bugs")
	return func(e *env, args []string) error { return runServe(e, f, args) }
}

// runServe runs analyze serve.
func runServe(e *env, f *serveFlags, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("missing trace file argument")
	case len(args) > 1:
		return usagef("want one trace file, got %d arguments", len(args))
	}
	addr, err := listenAddr(f.listen)
	if err != nil {
		return usagef("--listen: %v", err)
	}
	if f.mode != "auto" {
		if _, err := mgbuild.ParseMode(f.mode); err != nil {
			return usagef("--mode: %v (or auto)", err)
		}
	}
	if _, err := mgbuild.ParseScope(f.scope); err != nil {
		return usagef("--scope: %v", err)
	}
	if err := explore.CheckStages(f.stages); err != nil {
		return usagef("--stages: %v", err)
	}
	if f.spec != "" {
		if _, err := os.Stat(f.spec); err != nil {
			return fmt.Errorf("spec: %w", err)
		}
	}
	if len(args) == 1 {
		if err := checkLevelAt(e, args[0], schema.LevelHeap, ""); err != nil {
			return err
		}
	}
	opt := explore.Options{Spec: f.spec, Mode: f.mode, Scope: f.scope, Stages: f.stages, SourceDirs: f.sourceDirs,
		ForceBugs: f.forceBugs, BugsLimit: f.bugsLimit}
	onTerm := term.IsTerminal(e.stderr)
	var prog *stageProgress
	if onTerm {
		prog = &stageProgress{e: e}
		opt.Progress = prog.update
	}
	// Signals are caught from here on: Ctrl-C stops the server cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := explore.Open(args[0], opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	h := explore.NewHandler(s, web.Assets())
	if host, _, _ := net.SplitHostPort(addr); isLoopback(host) {
		h = loopbackOnly(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "analyze: serving %s at http://%s/ (Ctrl-C to stop)\n", oneLine(args[0]), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go func() {
		<-s.Done()
		if prog != nil {
			prog.finish(s)
		}
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	case <-ctx.Done():
		stop()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
		fmt.Fprintln(e.stderr, "\nanalyze: stopped")
	}
	return nil
}

// listenAddr checks --listen and fills in the host: 127.0.0.1 unless one
// is given.
func listenAddr(s string) (string, error) {
	if _, err := net.LookupPort("tcp", s); err == nil && s != "" {
		return net.JoinHostPort("127.0.0.1", s), nil // a port alone
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%q: want host:port or a port", s)
	}
	if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
		return "", fmt.Errorf("%q: bad port %q", s, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// stageProgress shows the build's progress on a terminal.
type stageProgress struct {
	e     *env
	stage string
	pc    int
}

func (p *stageProgress) update(stage string, done float64) {
	pc := int(done * 100)
	if stage == p.stage && pc == p.pc {
		return
	}
	p.stage, p.pc = stage, pc
	fmt.Fprintf(p.e.stderr, "\ranalyze: building %-8s %3d%%", stage, pc)
}

func (p *stageProgress) finish(s *explore.Session) {
	fmt.Fprintf(p.e.stderr, "\r%-40s\r", "")
	run := s.Run()
	for _, n := range run.Notes {
		fmt.Fprintf(p.e.stderr, "analyze: note: %s\n", n)
	}
	fmt.Fprintf(p.e.stderr, "analyze: built: %d events, %d changes\n", run.Events, run.Changes)
}

// isLoopback says whether a listen host is this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOnly refuses requests whose Host header names another machine:
// a web page elsewhere cannot reach the server through a DNS name it
// points at 127.0.0.1 (DNS rebinding) and read the program's sources.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if !isLoopback(strings.Trim(host, "[]")) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, "{\"error\": %q}\n", "the explorer answers only requests for localhost, 127.0.0.1 or [::1]")
			return
		}
		h.ServeHTTP(w, r)
	})
}
