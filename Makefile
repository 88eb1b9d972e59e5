# mgtrace: build, test and demo targets. `make help` lists them.
#
# Everything here needs only Go, make and a shell, except: `test` needs gcc
# (the race detector uses cgo), `generate` needs protoc (Debian package
# protobuf-compiler), and the recorder, once it exists, needs valgrind.
# .ci/run installs all of them on Debian.

GO       ?= go
MODULE   := github.com/mgtrace/mgtrace
FUZZTIME ?= 60s
# Size of the synthetic trace `make demo` writes.
DEMO_EVENTS ?= 2000000
# Size of the trace benchmark; 50 M events is the benchmark proper.
BENCH_EVENTS ?= 50000000

PROTOC_GO_OUT = protoc --plugin=protoc-gen-go=bin/protoc-gen-go \
	--go_opt=module=$(MODULE) -I schema schema/trace.proto

.PHONY: all help deps build test fmt-check vet race check-generate generate bench demo fuzz clean

all: build

help:
	@echo 'make deps            install missing system packages with apt-get (gcc, make, valgrind, protoc)'
	@echo 'make build           build bin/analyze (and bin/record once record/ exists)'
	@echo 'make test            gofmt check, go vet, check-generate (when protoc is installed), go test -race'
	@echo 'make demo            write a synthetic trace and look at it with bin/analyze'
	@echo 'make generate        rebuild schema/tracepb/trace.pb.go from schema/trace.proto (needs protoc)'
	@echo 'make check-generate  check that schema/tracepb/trace.pb.go matches schema/trace.proto'
	@echo 'make bench           run the trace benchmark and update bench/RESULTS.md (BENCH_EVENTS=$(BENCH_EVENTS))'
	@echo 'make fuzz            fuzz the trace reader for FUZZTIME=$(FUZZTIME)'
	@echo 'make clean           remove bin/ and out/'

# Installs missing system packages (gcc, make, valgrind, protoc) with
# apt-get; does nothing when they are all there.
deps:
	@bash .ci/deps

# -buildvcs=false: a fresh clone owned by another user must still build.
build:
	$(GO) build -buildvcs=false -o bin/analyze ./analyze
	@if [ -d record ]; then echo '$(GO) build -o bin/record ./record'; $(GO) build -buildvcs=false -o bin/record ./record; fi

# bin/tracegen and bin/tracebench: the synthetic trace writer and the benchmark.
bin/tracegen bin/tracebench: bin/%: FORCE
	$(GO) build -buildvcs=false -o $@ ./bench/$*

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

bench: bin/tracebench
	bin/tracebench -n $(BENCH_EVENTS) -results bench/RESULTS.md

# Until the recorder exists, the demo's trace is synthetic (bench/tracegen).
demo: deps build bin/tracegen
	@echo '== mgtrace demo. The recorder is not written yet, so this trace is synthetic:'
	@echo '== $(DEMO_EVENTS) events of a made-up list-walking program from bench/tracegen.'
	@mkdir -p out
	bin/tracegen -n $(DEMO_EVENTS) -o out/demo.trace
	bin/analyze info out/demo.trace
	bin/analyze dump --limit 10 out/demo.trace

fuzz:
	@grep -qs '^func FuzzReader' schema/*_test.go || { echo 'make fuzz: schema has no FuzzReader test yet'; exit 1; }
	$(GO) test ./schema -run XXX -fuzz FuzzReader -fuzztime $(FUZZTIME)

clean:
	rm -rf bin out

FORCE:
