package wrap

// The jail init that a build with -tags wshinit embeds. It must be built
// from the same tree as the binary that embeds it: the Makefile, the e2e
// tests and bench/run.sh run this before every such build.
//
//go:generate env CGO_ENABLED=0 go build -trimpath -ldflags=-s -o initbin/wsh-jail-init ../cmd/wsh-jail-init
