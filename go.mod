module github.com/mgtrace/mgtrace

go 1.25

require (
	github.com/klauspost/compress v1.20.3
	github.com/spf13/pflag v1.0.10
	google.golang.org/protobuf v1.36.12
)

tool google.golang.org/protobuf/cmd/protoc-gen-go
