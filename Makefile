# wsh: make demo builds wsh and runs a demo script in the jail; make test
# runs the tests. Both first install libseccomp-dev and pkg-config when run
# as root, and otherwise say exactly what to install.

GO ?= go
BIN := bin/wsh
# scripts/build.sh builds the jail init without cgo (go generate ./internal/launch) and
# embeds it in a static wsh (-tags wshinit): every jailed command starts
# the init, and a small cgo-free one starts about 1.5 ms sooner than wsh
# itself (docs/performance.md). libseccomp-dev ships libseccomp.a. The e2e
# tests and internal/bench/run.sh build with the same script.

.PHONY: all deps test-deps build demo test vet bench clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	GO="$(GO)" sh scripts/build.sh $(BIN)

demo: build
	@cd "$$(mktemp -d)" && $(CURDIR)/$(BIN) $(CURDIR)/scripts/demo.sh

# The public API builds everywhere; where the jail cannot exist, shell runs
# commands unsandboxed with the one warning, or refuses under
# WSH_REQUIRE_SANDBOX (shell/engine_plain.go).
vet: deps
	$(GO) generate ./internal/launch
	$(GO) vet ./...
	$(GO) vet -tags wshinit ./internal/launch ./cmd/...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) build ./...
	CGO_ENABLED=0 $(GO) build ./...

# The race detector runs the in-process packages once more: the client of
# the jail's file server is shared by background jobs. Then the
# shell without a jail (a build without cgo), and examples/agent, a module
# of its own that embeds wsh as an agent's tool runner does.
# The jail's e2e suites run a second time with a jail per command
# (WSH_JAIL=command): the default is a session, one jail per run, on the
# ladder's lower rungs too (TestLadder but TestLadderSession*, which runs
# both modes itself), and but TestSession*, each of which sets WSH_JAIL
# itself (sessionEnv, or a subtest per mode): run again, they only ran
# the same twice.
E2E_JAIL_SUITES = ^(TestContainment|TestJail|TestTarget|TestTraced|TestHostile|TestNoForged|TestEveryExitStatus|TestProtected|TestWritable|TestStdin|TestReadOnlyStdin|TestDeviceNodes|TestHostSockets|TestInitInherits|TestLateHiddenPath|TestHiddenParentCannotMove|TestHome(Hidden|Stdin|WritesStay|StateOutOfReach)|TestLadder[^S]|TestInterrupt|TestTerminalCtrlC|TestUmask|TestKill|TestInteractive|TestWrap)

test-deps:
	@sh scripts/deps.sh test

# After the whole suite, the e2e rerun with a jail per command, the race
# tests, the build without cgo and the embedder's module run at once
# (scripts/together.sh prints each one's output whole, then a summary).
test: test-deps vet
	$(GO) test -count=1 -timeout 20m -v ./...
	sh scripts/together.sh \
		"e2e, WSH_JAIL=command" "E2E_WSH_JAIL=command $(GO) test -count=1 -timeout 20m -v -run '$(E2E_JAIL_SUITES)' ./internal/e2e" \
		"race" "$(GO) test -count=1 -race ./shell ./wrap ./internal/confine ./internal/shellfs ./internal/session ./internal/launch ./internal/protect ./internal/paths ./internal/watch ./internal/streams ./internal/worktree ./internal/gitmediate" \
		"no cgo" "CGO_ENABLED=0 $(GO) test -count=1 ./shell ./wrap" \
		"examples/agent" "cd examples/agent && $(GO) vet ./... && $(GO) test -count=1 -v ./..."

# make bench runs the benchmarks of internal/bench/ (per exec, per script, memory,
# 10,000 execs) and prints medians and ratios; it installs bubblewrap as
# root. BENCH_COUNT=N sets -count (6), BENCH_SCALE=0 skips the long run.
bench: deps
	@GO="$(GO)" sh internal/bench/run.sh

clean:
	rm -rf bin internal/launch/initbin
