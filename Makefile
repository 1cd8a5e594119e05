# wsh: make demo builds wsh and runs a demo script in the jail; make test
# runs the tests. Both first install libseccomp-dev and pkg-config when run
# as root, and otherwise say exactly what to install.

GO ?= go
BIN := bin/wsh
# wsh is built static: every jailed command starts the binary again as its
# jail init, and a static one starts about 1 ms sooner (docs/performance.md).
# libseccomp-dev ships libseccomp.a. e2e/main_test.go and bench/run.sh use
# the same flags.
STATIC := -tags 'netgo osusergo' -ldflags '-linkmode external -extldflags "-static"'

.PHONY: all deps build demo test vet bench clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	$(GO) build $(STATIC) -o $(BIN) ./cmd/wsh

demo: build
	@cd "$$(mktemp -d)" && $(CURDIR)/$(BIN) $(CURDIR)/scripts/demo.sh

vet: deps
	$(GO) vet ./...

test: deps vet
	$(GO) test -count=1 -v ./...

# make bench runs the benchmarks of bench/ (per exec, per script, memory,
# 10,000 execs) and prints medians and ratios; it installs bubblewrap as
# root. BENCH_COUNT=N sets -count (6), BENCH_SCALE=0 skips the long run.
bench: deps
	@GO="$(GO)" sh bench/run.sh

clean:
	rm -rf bin
