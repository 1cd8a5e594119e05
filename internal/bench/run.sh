#!/bin/sh
# make bench: runs wsh's benchmarks (package bench) and prints their raw
# results (the go test -bench format, which benchstat reads), benchstat's
# tables when the module proxy serves benchstat, and the medians and
# ratios of internal/bench/cmd/benchtable, with the targets of docs/performance.md.
#
# The benchmarks' own variables are not named WSH_*: wsh refuses a WSH_
# variable it does not know.
#
# Environment: BENCH_COUNT (default 6) is -count for the per-exec and
# script benchmarks; BENCH_OUT (default bin/bench) gets the binaries and
# raw.txt; BENCH_SCALE=0 leaves out the 10,000-exec run (about 2.5 min).
set -eu
cd "$(dirname "$0")/../.."
GO=${GO:-go}
COUNT=${BENCH_COUNT:-6}
OUT=${BENCH_OUT:-bin/bench}
SCALE=${BENCH_SCALE:-1}
mkdir -p "$OUT"
RAW=$OUT/raw.txt

# Bubblewrap, the baseline. As root it is installed; otherwise its
# benchmarks are skipped and the command to install it is printed.
if ! command -v bwrap >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing bubblewrap" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >&2
		apt-get install -y -q bubblewrap >&2
	else
		echo "bubblewrap is missing, so its benchmarks are skipped; install it with:" >&2
		echo "    sudo apt-get update && sudo apt-get install -y bubblewrap" >&2
	fi
fi

# As make build makes wsh: static, with the cgo-free jail init embedded;
# bench.test embeds it too, so the library's jail starts the same init.
GO="$GO" sh scripts/build.sh "$OUT/bench.test" test:./internal/bench
GO="$GO" sh scripts/build.sh "$OUT/wsh"
$GO build -o "$OUT/hostile" ./internal/e2e/hostile
BT=$OUT/bench.test
BENCH_WSH_BIN=$(cd "$OUT" && pwd)/wsh
export BENCH_WSH_BIN

# The wsh of BENCH_BASE (default: the last commit before the shell's own
# file access moved into the jail), for BenchmarkShellFiles to pair with.
BASE=${BENCH_BASE:-9c726c4}
rm -rf "$OUT/base-src"
mkdir -p "$OUT/base-src"
if git archive "$BASE" 2>/dev/null | tar -x -C "$OUT/base-src" &&
	(cd "$OUT/base-src" && GO="$GO" sh scripts/build.sh ../wsh-base >&2); then
	BENCH_WSH_BASE=$(cd "$OUT" && pwd)/wsh-base
	export BENCH_WSH_BASE
else
	echo "the wsh of $BASE could not be built (no git history?): BenchmarkShellFiles pairs with bash alone" >&2
fi
rm -rf "$OUT/base-src"

: >"$RAW"
step() { echo "== $*" >&2; }

step "per exec, this host (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkExec$' -test.count "$COUNT" | tee -a "$RAW"

step "per exec, paired: A and B alternate (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkPair$/^pair=(opted-out-vs-default-handler|jail-vs-bwrap|jail-vs-bare|jail-vs-jail-command|jail-command-vs-bare|jail-command-vs-jail-command-hostnet|bwrap-vs-bare|jail-home-vs-jail-home-readonly)$' \
	-test.count "$COUNT" | tee -a "$RAW"

step "the latency wsh's proxy adds to a request, paired with the request made directly (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkProxy$' -test.count "$COUNT" | tee -a "$RAW"

step "CPU per exec (user+sys of the whole tree, counted by a cgroup), paired (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkCPU$' -test.count "$COUNT" | tee -a "$RAW"

step "a Runner's start and first command, and wsh -c :, paired (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkFirstCommand$' -test.benchtime 50x -test.count "$COUNT" | tee -a "$RAW"
"$BT" -test.run '^$' -test.bench '^BenchmarkWshC$' -test.benchtime 50x -test.count "$COUNT" | tee -a "$RAW"
"$BT" -test.run '^$' -test.bench '^BenchmarkRenames$' -test.benchtime 5x -test.count "$COUNT" | tee -a "$RAW"

step "per exec, the jail with a large heap in the calling program (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkJailParentHeap$' -test.count "$COUNT" | tee -a "$RAW"

step "per exec, under the hostile harness's mode 1 (clone refused: EPERM)"
BENCH_HOST=hostile-mode1 "$OUT/hostile" 1 -- "$BT" -test.run '^$' \
	-test.bench '^BenchmarkExec$/^path=(bare|default-handler|opted-out|landlock|landlock-command|attempt-per-exec)$' \
	-test.count "$COUNT" | tee -a "$RAW"
BENCH_HOST=hostile-mode1 "$OUT/hostile" 1 -- "$BT" -test.run '^$' \
	-test.bench '^BenchmarkPair$/^pair=(landlock-vs-opted-out|landlock-vs-bare|landlock-vs-landlock-command|landlock-command-vs-bare|opted-out-vs-default-handler)$' \
	-test.count "$COUNT" | tee -a "$RAW"

step "a script of 200 external commands (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkScript$' -test.benchtime 1x -test.count "$COUNT" | tee -a "$RAW"

step "the shell's own file access: 1,000 redirections and globs, paired with $BASE's wsh and bash (-count $COUNT)"
"$BT" -test.run '^$' -test.bench '^BenchmarkShellFiles$' -test.benchtime 5x -test.count "$COUNT" | tee -a "$RAW"

step "resident memory (kB)"
"$BT" -test.run '^$' -test.bench '^BenchmarkMemory$' -test.benchtime 1x -test.count 3 | tee -a "$RAW"

if [ "$SCALE" != 0 ]; then
	step "10,000 jailed execs in one Runner: nothing left behind"
	"$BT" -test.run '^$' -test.bench '^BenchmarkScale$' -test.benchtime 1x -test.count 1 -test.v |
		grep -v '^=== ' | tee -a "$RAW"
fi

# The landlock rung must not pay a full jail's attempt per exec: count the
# clones with CLONE_NEWUSER that wsh makes for 50 commands, under mode 1
# (one refused attempt, then none: the rung's inits are started without
# namespaces) and under mode 0 (the control: 50 jails).
if command -v strace >/dev/null 2>&1; then
	step "jail attempts (clone with CLONE_NEWUSER) for 50 commands"
	for mode in 1 0; do
		strace -f -qq -e trace=clone,clone3 -o "$OUT/strace-mode$mode.txt" \
			"$OUT/hostile" "$mode" -- "$OUT/wsh" -c 'i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done' 2>/dev/null || true
		n=$(grep -c 'CLONE_NEWUSER' "$OUT/strace-mode$mode.txt" || true)
		refused=$(grep 'CLONE_NEWUSER' "$OUT/strace-mode$mode.txt" | grep -c 'EPERM' || true)
		echo "hostile mode $mode: $n clones with CLONE_NEWUSER ($refused refused with EPERM) for 50 commands"
	done
else
	echo "strace is missing: the count of jail attempts is left out (apt-get install -y strace)" >&2
fi

step "benchstat"
if $GO run golang.org/x/perf/cmd/benchstat@latest -filter '.name:Exec' -col /path "$RAW" 2>"$OUT/benchstat.err"; then
	$GO run golang.org/x/perf/cmd/benchstat@latest -filter '.name:Pair' "$RAW"
	$GO run golang.org/x/perf/cmd/benchstat@latest -filter '.name:Script' -col /path "$RAW"
else
	echo "benchstat is not available ($(head -n 1 "$OUT/benchstat.err")); the raw results are in $RAW" >&2
fi

step "medians and ratios"
$GO run ./internal/bench/cmd/benchtable "$RAW"
