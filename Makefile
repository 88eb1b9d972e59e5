# mgtrace: build, test and demo targets. `make help` lists them.
#
# Needs Go, make, gcc (the probe is C; the race detector uses cgo) and
# valgrind (the recorder's engine; its package also holds the headers the
# probe builds against); `generate` needs protoc (Debian package
# protobuf-compiler); the tests read the slicer's Arrow output with Node's
# apache-arrow too (tools/arrowcheck; Debian packages nodejs and npm).
# `make deps` (.ci/deps) installs them on Debian, and the npm package.

GO       ?= go
MODULE   := github.com/mgtrace/mgtrace
FUZZTIME ?= 60s
# Nodes of the list the demo records.
DEMO_NODES ?= 5
# Size of the trace benchmark; 50 M events is the benchmark proper.
BENCH_EVENTS ?= 50000000
# Counted runs of each command in the record benchmark (after a warm-up);
# fewer than 3 make a smoke run.
BENCH_RUNS ?= 3
# How long the slicing benchmark lets one baseline traversal run.
SLICE_TIMEOUT ?= 120s

# What 'record --version' and 'analyze --version' print: git describe and
# the commit, when this is a git checkout ("devel" and no commit when not).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X $(MODULE)/internal/version.Version=$(VERSION) -X $(MODULE)/internal/version.Commit=$(COMMIT)

# Where `make install` puts things (DESTDIR is prepended, for packaging),
# and the folder it takes the built commands and the probe from.
PREFIX ?= /usr/local
INSTALL_FROM ?= bin
BINDIR     = $(DESTDIR)$(PREFIX)/bin
PROBEDIR   = $(DESTDIR)$(PREFIX)/libexec/mgtrace
INCLUDEDIR = $(DESTDIR)$(PREFIX)/include

PROTOC_GO_OUT = protoc --plugin=protoc-gen-go=bin/protoc-gen-go \
	--go_opt=module=$(MODULE) -I schema schema/trace.proto

.PHONY: install uninstall dist traces pgo all help deps build test fmt-check vet race check-generate generate bench bench-record bench-mg bench-locate bench-locate-real bench-slice bench-bugs bench-lin bench-region bench-sched bench-reduce demo fuzz clean bench-xslice bench-inputs bench-serve web-vendor

all: build

help:
	@echo 'make deps            install missing system packages with apt-get (gcc, g++, make, valgrind, protoc, nodejs, npm) and tools/arrowcheck (npm ci)'
	@echo 'make build           build bin/analyze, bin/record and the probe bin/mgtrace-amd64-linux'
	@echo 'make install         build, then install record, analyze and mgtrace-ci into PREFIX/bin, the probe into PREFIX/libexec/mgtrace, mgtrace.h into PREFIX/include (PREFIX=$(PREFIX); DESTDIR for packaging)'
	@echo 'make uninstall       remove what make install put under PREFIX'
	@echo 'make dist            a release: out/mgtrace-VERSION-linux-amd64.tar.gz, the files of make install under mgtrace-VERSION/'
	@echo 'make test            gofmt check, go vet, check-generate (when protoc is installed), go test -race'
	@echo 'make demo            record a small C program and look at its trace with bin/analyze'
	@echo 'make generate        rebuild schema/tracepb/trace.pb.go from schema/trace.proto (needs protoc)'
	@echo 'make check-generate  check that schema/tracepb/trace.pb.go matches schema/trace.proto'
	@echo 'make bench           run both benchmarks, trace then record, and update bench/RESULTS.md (BENCH_EVENTS=$(BENCH_EVENTS))'
	@echo 'make bench-record    time record against valgrind --tool=none and native runs, update bench/RESULTS.md (BENCH_RUNS=$(BENCH_RUNS), about 4 minutes)'
	@echo 'make bench-mg        MG++ build speed, bytes per node+edge, snapshot time, node counts; update bench/RESULTS.md'
	@echo 'make bench-serve     analyze serve on a 110 M-event trace: first view, graph at 50 moments, peak memory; update bench/RESULTS.md (about 1 minute)'
	@echo 'make bench-locate    constraint checking and fault location on testdata/programs/ds, Tarantula, and Table 3 of the fault-location paper (Singh, Gupta and Neamtiu, "Automatic Fault Location for Data Structures", CC 2016); update bench/RESULTS.md (about 10 minutes)'
	@echo 'make bench-locate-real  fault location on real programs (GNU ls, libiberty'"'"'s splay tree, Bison) rebuilt from Debian'"'"'s source packages by testdata/real/get.sh (downloads, root for apt-get), beside tables 4.3 and 4.4 of Vineet Singh'"'"'s dissertation ("User Assisted Data Structure Debugging and Verification", UC Riverside, 2016); update bench/RESULTS.md (about 10 minutes the first time)'
	@echo 'make bench-slice     backward slicing of ~1 M and ~10 M-instruction runs: slice.Load, improved vs baseline traversal, analyze slice end to end; update bench/RESULTS.md (about 30 minutes)'
	@echo 'make bench-bugs      analyze bugs against valgrind memcheck: detection per class on testdata/programs/bugs, table 3.4 of Yan Wang'"'"'s dissertation ("Dynamic Analysis Techniques for Effective and Efficient Debugging", UC Riverside, 2014: chains vs slices), speed on the record benchmark programs; update bench/RESULTS.md (about 7 minutes)'
	@echo 'make bench-xslice    execution slices of the slicing benchmark'"'"'s runs from its criterion #1: instructions and events kept, size, the same slice; update bench/RESULTS.md (about 3 minutes)'
	@echo 'make bench-region    record --from/--to on 5% of slicework against the whole run and valgrind --tool=none; update bench/RESULTS.md (about 3 minutes)'
	@echo 'make bench-lin       lin.Check against porcupine in one process: porcupine'"'"'s own test histories, then generated ones where its search blows up; update bench/RESULTS.md (about 14 minutes, up to 16 GiB of memory)'
	@echo 'make bench-inputs    relevant input analysis (analyze inputs) of calc'"'"'s crash on 2,000- and 20,000-line expression files: entities, load and pass times, instances per second, peak memory; update bench/RESULTS.md (about 4 minutes)'
	@echo 'make bench-reduce    input reduction: runs, size and time of ddmin, IDTHDD and IDTHDD* on testdata/programs/inputs (calc and ini, small and large; markup), IDTHDD* checked 1-minimal; update bench/RESULTS.md (about 16 minutes)'
	@echo 'make bench-sched     interleaving control (record --preempt, --sched-seed) on a racy counter: distinct interleavings over 100 seeds, reproducibility, switches per second; update bench/RESULTS.md (about 8 minutes)'
	@echo 'make traces          re-record the small traces in testdata/traces/ that analysis tests use'
	@echo 'make pgo             regenerate record/default.pgo, the profile bin/record is optimized with'
	@echo 'make fuzz            fuzz the trace reader, the probe stream decoder, the graph builder, the spec parser, the instruction decoder, the bug-rule parser, the history readers and the operations-file parser, FUZZTIME=$(FUZZTIME) each'
	@echo 'make web-vendor      re-install the explorer'"'"'s graph-layout library (@dagrejs/dagre) from explore/web/package-lock.json with npm ci and copy it into explore/web/static/vendor (then update its recorded SHA-256 in explore/web/vendor_test.go)'
	@echo 'make clean           remove bin/ and out/'

# Installs missing system packages (gcc, make, valgrind, protoc, nodejs,
# npm) with apt-get, and tools/arrowcheck's npm package with npm ci; does
# nothing when they are all there.
deps:
	@bash .ci/deps

# -buildvcs=false: a fresh clone owned by another user must still build.
build:
	$(GO) build -buildvcs=false -ldflags '$(LDFLAGS)' -o bin/analyze ./analyze
	$(GO) build -buildvcs=false -ldflags '$(LDFLAGS)' -o bin/record ./record
	$(MAKE) --no-print-directory -C record/vgtool OUT=$(CURDIR)/bin

# bin/tracegen, bin/tracebench and bin/recordbench: the synthetic trace
# writer and the benchmarks.
bin/tracegen bin/tracebench bin/recordbench bin/mgbench bin/locatebench bin/locaterealbench bin/slicebench bin/bugsbench bin/linbench bin/regionbench bin/schedbench bin/reducebench bin/xslicebench bin/inputsbench bin/servebench: bin/%: FORCE
	$(GO) build -buildvcs=false -o $@ ./bench/$*

# The commands (and tools/mgtrace-ci, the CI script of docs/ci.md) in
# PREFIX/bin, the probe in PREFIX/libexec/mgtrace (where
# record looks for it: ../libexec/mgtrace from its own folder), the
# client header for C-points in PREFIX/include. See docs/install.md.
install: build
	install -d $(BINDIR) $(PROBEDIR) $(INCLUDEDIR)
	install -m 0755 $(INSTALL_FROM)/record $(INSTALL_FROM)/analyze tools/mgtrace-ci $(BINDIR)/
	install -m 0755 $(INSTALL_FROM)/mgtrace-amd64-linux $(PROBEDIR)/
	install -m 0644 include/mgtrace.h $(INCLUDEDIR)/

# A release: the files of make install under mgtrace-VERSION/, as
# out/mgtrace-VERSION-linux-amd64.tar.gz (docs/install.md).
dist: build
	rm -rf out/dist && mkdir -p out/dist
	$(MAKE) --no-print-directory -o build install DESTDIR= PREFIX=$(CURDIR)/out/dist/mgtrace-$(VERSION)
	tar -C out/dist -czf out/mgtrace-$(VERSION)-linux-amd64.tar.gz mgtrace-$(VERSION)
	@echo 'release: out/mgtrace-$(VERSION)-linux-amd64.tar.gz'

uninstall:
	rm -f $(BINDIR)/record $(BINDIR)/analyze $(BINDIR)/mgtrace-ci $(PROBEDIR)/mgtrace-amd64-linux $(INCLUDEDIR)/mgtrace.h
	-rmdir $(PROBEDIR) 2>/dev/null

test: deps fmt-check vet
	@if command -v protoc >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory check-generate; \
	else \
		echo 'protoc is not installed: skipping check-generate (apt-get install protobuf-compiler)'; \
	fi
	@$(MAKE) --no-print-directory race

fmt-check:
	@files=$$(gofmt -l .); \
	if [ -n "$$files" ]; then \
		echo 'gofmt -l: these files are not formatted (run gofmt -w on them):'; \
		echo "$$files"; \
		exit 1; \
	fi

vet:
	$(GO) vet ./...

race:
	@cc=$$($(GO) env CC); if ! command -v "$$cc" >/dev/null 2>&1; then \
		echo "make test: go test -race needs a C compiler ($$cc); install gcc (apt-get install gcc, or run .ci/run as root)"; \
		exit 1; \
	fi
	CGO_ENABLED=1 $(GO) test -race ./...
	$(GO) test -run 'TestSuite$$' ./locate/
	$(GO) test -run 'TestCorpus$$' ./bugs/

# protoc-gen-go at the version go.mod pins (it is a tool of the module).
bin/protoc-gen-go: go.mod go.sum
	$(GO) build -buildvcs=false -o $@ google.golang.org/protobuf/cmd/protoc-gen-go

generate: bin/protoc-gen-go
	@command -v protoc >/dev/null 2>&1 || { echo 'make generate: protoc not found; apt-get install protobuf-compiler'; exit 1; }
	$(PROTOC_GO_OUT) --go_out=.

# Regenerates into a temporary directory and compares. The line naming the
# protoc version is left out of the comparison: protoc releases differ in it
# but not in the code.
check-generate: bin/protoc-gen-go
	@command -v protoc >/dev/null 2>&1 || { echo 'make check-generate: protoc not found; apt-get install protobuf-compiler'; exit 1; }
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PROTOC_GO_OUT) --go_out="$$tmp" && \
	if diff -u -I '^// 	protoc ' schema/tracepb/trace.pb.go "$$tmp/schema/tracepb/trace.pb.go"; then \
		echo 'check-generate: schema/tracepb/trace.pb.go is up to date'; \
	else \
		echo 'check-generate: schema/tracepb/trace.pb.go does not match schema/trace.proto; run make generate'; \
		exit 1; \
	fi

# The trace benchmark (BENCH_EVENTS), then the record benchmark: one after
# the other, also under make -j, since each needs a quiet machine.
bench: bin/tracebench
	bin/tracebench -n $(BENCH_EVENTS) -results bench/RESULTS.md
	@$(MAKE) --no-print-directory bench-record

# The record benchmark times record, valgrind --tool=none and native runs
# of a few programs, with record and the probe built from the sources.
bench-record: build bin/recordbench
	bin/recordbench -runs $(BENCH_RUNS) -results bench/RESULTS.md

# MG++ construction speed, memory, retrieval and node counts on recorded
# runs of list, tree, ls, python3 and perl (bench/mgbench).
bench-mg: build bin/mgbench
	bin/mgbench -results bench/RESULTS.md

# The explorer's server (analyze serve) on a ~110 M-event recording of
# the list program: first view, moments after the build, peak memory.
bench-serve: build bin/servebench
	bin/servebench -results bench/RESULTS.md

# Constraint checking and fault location (package locate) on the data
# structure suite testdata/programs/ds: full and incremental check times,
# fault location time and the statements it reports, against Tarantula and
# the paper's Table 3 (bench/locatebench).
bench-locate: build bin/locatebench
	bin/locatebench -results bench/RESULTS.md

# Fault location on real programs (bench/locaterealbench): GNU ls's list
# of pending directories, libiberty's splay tree (GCC) and Bison's symbol
# table, fetched from Debian's source packages, patched with our injected
# faults and built by testdata/real/get.sh under out/real (it needs the
# network, and root or sudo to add deb-src entries and install build
# tools); then each fault located from the crash, beside the figures of
# Singh's dissertation, tables 4.3 and 4.4. Not part of make test.
bench-locate-real: build bin/locaterealbench
	testdata/real/get.sh all
	bin/locaterealbench -results bench/RESULTS.md

# Backward dynamic slicing (package slice) on recorded runs of
# testdata/programs/slicework.c of about 1 M and 10 M instruction
# instances: slice.Load, the improved and the baseline traversal from the
# last 5 memory reads (Singh's dissertation, chapter 5), and analyze slice end to end
# against the 10 s target (bench/slicebench). SLICE_TIMEOUT stops a
# baseline traversal.
bench-slice: build bin/slicebench
	bin/slicebench -runs $(BENCH_RUNS) -timeout $(SLICE_TIMEOUT) -results bench/RESULTS.md

# The memory-bug finder (package bugs, analyze bugs) against Valgrind's
# memcheck (bench/bugsbench): detection per class on the corpus
# testdata/programs/bugs with both tools, Wang's table 3.4 (value
# propagation chains against dynamic slices and the whole run), and the
# speed of record + analysis on one core against memcheck on the record
# benchmark's programs.
bench-bugs: build bin/bugsbench
	bin/bugsbench -results bench/RESULTS.md

# Execution slices (analyze slice --reduced-trace) of the slicing
# benchmark's runs from its criterion #1: what they keep, their size, and
# that they give the original's slice (bench/xslicebench).
bench-xslice: build bin/xslicebench
	bin/xslicebench -results bench/RESULTS.md

# Region recording (record --from/--to) against whole-run recording and
# valgrind --tool=none on slicework (bench/regionbench).
bench-region: build bin/regionbench
	bin/regionbench -results bench/RESULTS.md

# Relevant input analysis (bench/inputsbench): analyze inputs' steps on
# recordings of calc on generated expression files.
bench-inputs: build bin/inputsbench
	bin/inputsbench -results bench/RESULTS.md

# Input reduction (bench/reducebench): ddmin, IDTHDD and IDTHDD* on the
# failing inputs of testdata/programs/inputs, every test a re-recording.
bench-reduce: build bin/reducebench
	bin/reducebench -results bench/RESULTS.md

# The linearizability checker (package lin) against porcupine, the peer
# it is measured against, in one process (bench/linbench): porcupine's own
# test histories (its Jepsen etcd logs and key-value histories, read from
# its module directory), then generated histories where a search over
# orders blows up (porcupine limited to 60 s, ours to 10 s; within its
# minute porcupine's search can take some 16 GiB). Needs no build of the
# recorder.
bench-lin: bin/linbench
	bin/linbench -results bench/RESULTS.md

# Interleaving control (record --preempt N --sched-seed S) on
# testdata/programs/racy.c, two threads with a racy counter
# (bench/schedbench): distinct final values and thread switch sequences
# over 100 seeds with and without the flags, the same seed recorded twice,
# and thread switches per second of recording.
bench-sched: build bin/schedbench
	bin/schedbench -results bench/RESULTS.md

# testdata/traces/*.trace: small recorded traces that analysis tests read
# without the recorder (see testdata/traces/README.md).
traces: build
	testdata/traces/regen.sh

# record/default.pgo: the CPU profile Go's profile-guided optimization
# builds bin/record with (recording the list and tree benchmark programs).
# Regenerate it after large changes to the recorder's hot path.
pgo: build
	@mkdir -p out
	gcc -O2 -g -Iinclude -o out/pgo-list testdata/programs/list.c
	gcc -O2 -g -Iinclude -o out/pgo-tree testdata/programs/tree.c
	bin/record -q --cpuprofile out/pgo-list.prof -o out/pgo-list.trace -- out/pgo-list 100000 > /dev/null
	bin/record -q --cpuprofile out/pgo-tree.prof -o out/pgo-tree.trace -- out/pgo-tree 150000 > /dev/null
	$(GO) tool pprof -proto out/pgo-list.prof out/pgo-tree.prof > record/default.pgo
	rm -f out/pgo-list.trace out/pgo-tree.trace

# The demo: record a C program that builds a linked list, then look at the
# trace: what it holds, and the stores that built each node.
demo: deps build
	@mkdir -p out
	gcc -g -O1 -Iinclude -o out/list testdata/programs/list.c
	bin/record -o out/list.trace -- out/list $(DEMO_NODES)
	bin/analyze info out/list.trace
	@echo '== stores made by the code of list.c, with their source lines:'
	bin/analyze dump --format text --kind store out/list.trace | grep 'list\.c' | head -20
	@echo '== the MG++ memory graph of the run (a node per malloc block; --mode agnostic builds it from heap references alone):'
	bin/analyze mg out/list.trace
	@echo '== a heap overflow into a neighbouring block (analyze mg --overflow exits 1 on findings):'
	gcc -g -O1 -Iinclude -o out/overflow testdata/programs/overflow.c
	bin/record -q -o out/overflow.trace -- out/overflow > /dev/null
	bin/analyze mg --overflow out/overflow.trace | tail -3 || true
	@echo '== which statement corrupted the quad tree? testdata/programs/ds/qdtree.c built with FAULT=1'
	@echo '   (Figure 1 of Singh, Gupta and Neamtiu, "Automatic Fault Location for Data Structures", CC 2016: split() stores NULL into a child pointer), recorded, then analyze locate'
	@echo '   with testdata/programs/ds/qdtree.spec (exit status 1: faults found):'
	gcc -g -O1 -fno-omit-frame-pointer -Iinclude -DFAULT=1 -o out/qdtree testdata/programs/ds/qdtree.c
	bin/record -q -o out/qdtree.trace -- out/qdtree > /dev/null 2>&1 || true # the faulty program gives up (exit 3) once the tree is broken
	bin/analyze locate out/qdtree.trace testdata/programs/ds/qdtree.spec; test $$? -eq 1
	@echo '== where did the bad pointer come from? testdata/programs/slice/crash.c dereferences a'
	@echo '   computed wild pointer; analyze slice --criterion crash lists the lines that made it:'
	gcc -g -O0 -fno-omit-frame-pointer -Iinclude -o out/crash testdata/programs/slice/crash.c
	bin/record -q -o out/crash.trace -- out/crash > /dev/null 2>&1 || true # the program dies of SIGSEGV
	bin/analyze slice --criterion crash --format text out/crash.trace
	@echo '== the crash as one HTML file to open in a browser, no server or network needed:'
	@echo '   the explorer at the crash, its slice lines, the graph (exit status 1: a crash is a finding)'
	bin/analyze report out/crash.trace -o out/crash-report.html; test $$? -eq 1
	@echo '== which memory bug, and where did the pointer come from? testdata/programs/bugs/df_shallow_copy.c'
	@echo '   frees an attribute value twice through a shallow copy; analyze bugs names both frees and'
	@echo '   the chains of the two pointers back to the copy (exit status 1: bugs found):'
	gcc -g -O1 -fno-omit-frame-pointer -Iinclude -o out/df_shallow_copy testdata/programs/bugs/df_shallow_copy.c
	bin/record -q -o out/df_shallow_copy.trace -- out/df_shallow_copy > /dev/null 2>&1 || true # glibc aborts on the double free
	bin/analyze bugs --only double_free out/df_shallow_copy.trace; test $$? -eq 1
	@echo '== which race made the snapshot wrong? testdata/programs/lin/snapshot.c built with -DFAULTY'
	@echo '   (the pair snapshot of Yang Chen, Zhenya Zhang, Peng Wu and Yu Zhang, "Automatic Localization of Linearizability Faults", whose read re-checks one cell), run in the'
	@echo '   interleaving of their figure 4; analyze lin with snapshot.lin (exit status 1: not linearizable):'
	gcc -g -O1 -fno-omit-frame-pointer -pthread -Iinclude -DFAULTY -o out/snapshot testdata/programs/lin/snapshot.c
	bin/record -q -o out/snapshot.trace -- out/snapshot bad > /dev/null
	bin/analyze lin --html out/snapshot.html out/snapshot.trace testdata/programs/lin/snapshot.lin; test $$? -eq 1
	@echo '   (the same counterexample as a page to open in a browser: out/snapshot.html)'

fuzz:
	$(GO) test ./schema -run XXX -fuzz FuzzReader -fuzztime $(FUZZTIME)
	$(GO) test ./record/internal/probe -run XXX -fuzz FuzzDecoder -fuzztime $(FUZZTIME)
	$(GO) test ./mgbuild -run XXX -fuzz FuzzBuilder -fuzztime $(FUZZTIME)
	$(GO) test ./locate/spec -run XXX -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./slice/insn -run XXX -fuzz FuzzDecode -fuzztime $(FUZZTIME)
	$(GO) test ./bugs/rules -run XXX -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./bugs -run XXX -fuzz FuzzEngine -fuzztime $(FUZZTIME)
	$(GO) test ./lin/histfile -run XXX -fuzz '^FuzzParseJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lin/histfile -run XXX -fuzz '^FuzzParseEDN$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lin/histfile -run XXX -fuzz '^FuzzParseEtcdLog$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lin/histfile -run XXX -fuzz '^FuzzDetect$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lin/tracehist -run XXX -fuzz '^FuzzParseOps$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lin -run XXX -fuzz '^FuzzParseValue$$' -fuzztime $(FUZZTIME)

# The explorer's graph-layout library, pinned by explore/web/package-lock.json
# and committed in explore/web/static/vendor (the binary embeds it; nothing
# is fetched at run time). explore/web's tests check the copy's SHA-256.
web-vendor:
	cd explore/web && npm ci --ignore-scripts --no-audit --no-fund
	mkdir -p explore/web/static/vendor
	cp explore/web/node_modules/@dagrejs/dagre/dist/dagre.min.js explore/web/static/vendor/dagre.min.js
	{ echo '@dagrejs/dagre (includes @dagrejs/graphlib), MIT licence:'; echo; \
	  cat explore/web/node_modules/@dagrejs/dagre/LICENSE; echo; \
	  echo '@dagrejs/graphlib:'; echo; cat explore/web/node_modules/@dagrejs/graphlib/LICENSE; } \
	  > explore/web/static/vendor/dagre.LICENSE.txt
	sha256sum explore/web/static/vendor/dagre.min.js

clean:
	rm -rf bin out
	$(MAKE) --no-print-directory -C record/vgtool OUT=$(CURDIR)/bin clean

FORCE:
