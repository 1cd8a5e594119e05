// Command benchtable reads the output of wsh's benchmarks (go test -bench,
// as benchstat reads it) and prints the median of each benchmark and the
// ratios that docs/performance.md sets targets for.
//
//	go run ./bench/cmd/benchtable FILE...
//
// A "host: NAME" line (bench_test prints one) starts the results of one
// host: "normal", or "hostile-mode1" under the hostile harness. A ratio
// is the ratio of the two medians; the range after it is that of the
// ratios within each round (the i-th result of both), which ran close in
// time on this noisy machine.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// results holds, per host, per benchmark, per unit, the values in order.
type results map[string]map[string]map[string][]float64

var procsSuffix = regexp.MustCompile(`-\d+$`)

func parse(r io.Reader, res results, order *[]string) error {
	host := "normal"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "host: "); ok {
			host = strings.TrimSpace(v)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		if res[host] == nil {
			res[host] = map[string]map[string][]float64{}
		}
		if res[host][name] == nil {
			res[host][name] = map[string][]float64{}
			*order = append(*order, host+"\x00"+name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			res[host][name][f[i+1]] = append(res[host][name][f[i+1]], v)
		}
	}
	return sc.Err()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// A ratio is num/den of one host, with an optional target: the ratio must
// be at most max, or at most the ratio other (when set).
type ratio struct {
	host, num, den string
	max            float64
	other          *ratio
	note           string
}

var ratios = []ratio{
	{host: "normal", num: "BenchmarkExec/path=jail", den: "BenchmarkExec/path=bare", other: &ratio{host: "normal", num: "BenchmarkExec/path=bwrap", den: "BenchmarkExec/path=bare"}, note: "target: jail/bare <= bwrap/bare"},
	{host: "normal", num: "BenchmarkExec/path=jail-hostnet", den: "BenchmarkExec/path=bare", other: &ratio{host: "normal", num: "BenchmarkExec/path=bwrap", den: "BenchmarkExec/path=bare"}, note: "target: jail-hostnet/bare <= bwrap/bare"},
	{host: "normal", num: "BenchmarkExec/path=bwrap", den: "BenchmarkExec/path=bare"},
	{host: "normal", num: "BenchmarkExec/path=jail", den: "BenchmarkExec/path=bwrap"},
	{host: "normal", num: "BenchmarkExec/path=opted-out", den: "BenchmarkExec/path=default-handler", max: 1.05, note: "target: opted-out <= 1.05 x default-handler"},
	{host: "normal", num: "BenchmarkExec/path=default-handler", den: "BenchmarkExec/path=bare"},
	{host: "hostile-mode1", num: "BenchmarkExec/path=landlock", den: "BenchmarkExec/path=opted-out", note: "the landlock rung, where the host refuses the jail"},
	{host: "hostile-mode1", num: "BenchmarkExec/path=landlock", den: "BenchmarkExec/path=bare", note: "compare with jail/bare on this host"},
	{host: "hostile-mode1", num: "BenchmarkExec/path=attempt-per-exec", den: "BenchmarkExec/path=opted-out", note: "what a jail attempt per exec would cost"},
	{host: "hostile-mode1", num: "BenchmarkExec/path=opted-out", den: "BenchmarkExec/path=default-handler"},
	{host: "normal", num: "BenchmarkJailParentHeap/heap=256MiB", den: "BenchmarkJailParentHeap/heap=0MiB", note: "the jail with a 256 MiB heap in the caller vs none"},
	{host: "normal", num: "BenchmarkScript/path=wsh-jail", den: "BenchmarkScript/path=bash-bwrap", note: "200 commands: wsh -c vs bash + bwrap each"},
	{host: "normal", num: "BenchmarkScript/path=wsh-jail", den: "BenchmarkScript/path=bash-bare"},
	{host: "normal", num: "BenchmarkScript/path=wsh-opted-out", den: "BenchmarkScript/path=bash-bare"},
}

// value returns the ratio of the medians of ns/op and the range of the
// per-round ratios.
func (r ratio) value(res results) (med, lo, hi float64, ok bool) {
	a, b := res[r.host][r.num]["ns/op"], res[r.host][r.den]["ns/op"]
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, 0, false
	}
	med = median(a) / median(b)
	lo, hi = med, med
	for i := 0; i < len(a) && i < len(b); i++ {
		q := a[i] / b[i]
		lo, hi = min(lo, q), max(hi, q)
	}
	return med, lo, hi, true
}

// A pairTarget is a target on the A/B metric of a paired benchmark
// (BenchmarkPair, or the one its pair names: "BenchmarkCPU/jail-vs-bwrap").
type pairTarget struct {
	host, pair string
	max        float64 // 0: no target, for information
	note       string
}

var pairTargets = []pairTarget{
	{"normal", "opted-out-vs-default-handler", 1.05, "target: opted-out <= 1.05 x default-handler"},
	{"normal", "jail-vs-bwrap", 1.00, "target: jail/bare <= bwrap/bare, i.e. jail <= bwrap"},
	{"normal", "jail-vs-bare", 1.30, "target: a session's jailed exec <= 1.3 x a bare exec"},
	{"normal", "jail-vs-jail-command", 0, "a session's exec against a jail per command"},
	{"normal", "jail-command-vs-bare", 0, "a jail per command"},
	{"normal", "bwrap-vs-bare", 0, ""},
	{"normal", "jail-command-vs-jail-command-hostnet", 0, "a jail per command with a network of its own (namespace, lo, the proxy's listener) against the host's"},
	{"normal", "BenchmarkProxy/proxy-forward-vs-direct", 0, "an http:// request forwarded by wsh's proxy against the same made directly"},
	{"normal", "BenchmarkProxy/proxy-tunnel-vs-direct", 0, "a request through a CONNECT tunnel against the same made directly"},
	{"normal", "BenchmarkCPU/jail-vs-bwrap", 0.50, "target: CPU per jailed exec <= half of bubblewrap's"},
	{"normal", "BenchmarkCPU/jail-vs-jail-command", 0, "CPU, a session against a jail per command"},
	{"normal", "BenchmarkCPU/jail-vs-bare", 0, "CPU, against a bare exec"},
	{"normal", "BenchmarkCPU/jail-command-vs-bwrap", 0, "CPU, a jail per command against bubblewrap"},
	{"normal", "BenchmarkFirstCommand/start-session-vs-start-command", 1.00, "target: the session's start <= one jail (the per-command probe)"},
	{"normal", "BenchmarkFirstCommand/session-vs-command", 0, "a Runner up to its first command's end"},
	{"normal", "BenchmarkWshC/wsh-session-vs-bash", 0, "wsh -c : against bash -c :"},
	{"normal", "BenchmarkWshC/wsh-session-vs-wsh-command", 0, "wsh -c :, a session against a jail per command"},
	{"normal", "BenchmarkRenames/wsh-session-vs-bash", 0, "10,000 renames in python3: each goes to wsh (the git config group)"},
	{"hostile-mode1", "landlock-vs-opted-out", 0, "the landlock rung's cost per exec"},
	{"hostile-mode1", "landlock-vs-landlock-command", 0, "the landlock rung: a session against an init per command"},
	{"hostile-mode1", "landlock-command-vs-bare", 0, "the landlock rung with an init per command, against a bare exec"},
	{"normal", "jail-home-vs-jail-home-readonly", 1.10, "target: the copy-on-write home <= 1.10 x the read-only home"},
	{"hostile-mode1", "opted-out-vs-default-handler", 0, "under the hostile filter"},
}

func short(name string) string {
	return strings.TrimPrefix(name, "Benchmark")
}

func main() {
	res := results{}
	var order []string
	if len(os.Args) < 2 {
		if err := parse(os.Stdin, res, &order); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	for _, p := range os.Args[1:] {
		f, err := os.Open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		err = parse(f, res, &order)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	w := os.Stdout
	fmt.Fprintln(w, "medians")
	fmt.Fprintf(w, "  %-15s %-38s %3s %14s  %s\n", "host", "benchmark", "n", "ms/op", "other metrics (median)")
	for _, k := range order {
		host, name, _ := strings.Cut(k, "\x00")
		units := res[host][name]
		ns := units["ns/op"]
		var extra []string
		var keys []string
		for u := range units {
			if u != "ns/op" {
				keys = append(keys, u)
			}
		}
		sort.Strings(keys)
		for _, u := range keys {
			extra = append(extra, fmt.Sprintf("%s %s", fmtNum(median(units[u])), u))
		}
		fmt.Fprintf(w, "  %-15s %-38s %3d %14.3f  %s\n", host, short(name), len(ns), median(ns)/1e6, strings.Join(extra, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ratios of medians (ns/op), with the range of the per-round ratios")
	for _, r := range ratios {
		med, lo, hi, ok := r.value(res)
		label := fmt.Sprintf("%s / %s", strings.TrimPrefix(r.num, "Benchmark"), strings.TrimPrefix(r.den, "Benchmark"))
		if !ok {
			fmt.Fprintf(w, "  %-15s %-66s  not measured\n", r.host, label)
			continue
		}
		verdict := ""
		switch {
		case r.max > 0 && med <= r.max:
			verdict = "MET"
		case r.max > 0:
			verdict = "NOT MET"
		case r.other != nil:
			o, _, _, ok := r.other.value(res)
			switch {
			case !ok:
				verdict = "cannot tell (bwrap not measured)"
			case med <= o:
				verdict = fmt.Sprintf("MET (%.2f <= %.2f)", med, o)
			default:
				verdict = fmt.Sprintf("NOT MET (%.2f > %.2f)", med, o)
			}
		}
		if verdict != "" {
			verdict = "  " + r.note + ": " + verdict
		} else if r.note != "" {
			verdict = "  (" + r.note + ")"
		}
		fmt.Fprintf(w, "  %-15s %-66s %6.3f  [%.3f, %.3f]%s\n", r.host, label, med, lo, hi, verdict)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "paired ratios (BenchmarkPair: A and B alternate within one run), median A/B with its range over the rounds")
	for _, t := range pairTargets {
		bench, pair, ok := strings.Cut(t.pair, "/")
		if !ok {
			bench, pair = "BenchmarkPair", t.pair
		}
		v := res[t.host][bench+"/pair="+pair]["A/B"]
		if len(v) == 0 {
			fmt.Fprintf(w, "  %-15s %-52s  not measured\n", t.host, t.pair)
			continue
		}
		med, lo, hi := median(v), slices.Min(v), slices.Max(v)
		verdict := ""
		switch {
		case t.max > 0 && med <= t.max:
			verdict = "  " + t.note + ": MET"
		case t.max > 0:
			verdict = "  " + t.note + ": NOT MET"
		case t.note != "":
			verdict = "  (" + t.note + ")"
		}
		fmt.Fprintf(w, "  %-15s %-52s %6.3f  [%.3f, %.3f]%s\n", t.host, t.pair, med, lo, hi, verdict)
	}
}

func fmtNum(v float64) string {
	if v == float64(int64(v)) || v >= 1000 {
		return strconv.FormatInt(int64(math.Round(v)), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
