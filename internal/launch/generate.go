package launch

// The jail init that a build with -tags wshinit embeds. It must be built
// from the same tree as the binary that embeds it: scripts/build.sh (used
// by the Makefile, the e2e tests and internal/bench/run.sh) runs this before every
// such build and stamps the init's SHA-256 into the binary, which refuses
// an init without a matching stamp (init_embed.go).
//
//go:generate env CGO_ENABLED=0 go build -trimpath -ldflags=-s -o initbin/wsh-jail-init ../../cmd/wsh-jail-init
