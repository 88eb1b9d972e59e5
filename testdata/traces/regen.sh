#!/usr/bin/env bash
# Regenerates the traces in testdata/traces/ (`make traces`): builds each
# program of testdata/programs/ with the flags below and records it with
# bin/record (run `make build` first). Source paths in the debug info are
# made relative to the repository with -ffile-prefix-map, so the traces
# name testdata/programs/NAME.c wherever they were made.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-g -O1 -fno-omit-frame-pointer -pthread -Iinclude "-ffile-prefix-map=$root/=")

# name: program arguments (a name "prog-variant" records prog)
runs=(
	"list:5"
	"tree:50"
	"threads:100"
	"wild:"
	"cpoint:"
	"overflow:"
	"syscalls:"
	"breaklist:"
	"dlpool:"
	"specsem-cycle:cycle"
	"specsem-wild:wild"
)
for run in "${runs[@]}"; do
	name=${run%%:*}
	args=${run#*:}
	prog=${name%%-*}
	gcc "${flags[@]}" -o "$out/$prog" "testdata/programs/$prog.c"
	# Record from the output folder so that the header's paths are short.
	(cd "$out" && "$root/bin/record" -q -o "$root/testdata/traces/$name.trace" -- "./$prog" $args > /dev/null) || true
	echo "testdata/traces/$name.trace: $(wc -c < "testdata/traces/$name.trace") bytes"
done
