//go:build linux && cgo

package builtins

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/internal/job"
)

// A bgJob is one background job a script started (job.Mark's start call).
type bgJob struct {
	text     string
	parent   string // the job that started it, if one did
	done     bool
	status   int
	reported bool           // jobs showed it done: it is not shown again
	killed   syscall.Signal // kill %N sent a signal that ends it
}

// jobTable holds every background job of the Jailer's scripts, by id.
type jobTable struct {
	mu   sync.Mutex
	seq  int
	jobs map[string]*bgJob
}

// jobsVar lists the jobs of a shell as "N:ID" words (N is the job's
// number, as in $! (gN) and %N); the last word for an N is the one in
// force (a subshell numbers its own jobs from 1 again, over those it
// took from its parent). countVar is where a builtin reads how many jobs
// the interpreter has started in the shell it runs in.
const (
	jobsVar  = "__wsh_jobs"
	countVar = "__wsh_jobcount"
)

// jobCount is the number of jobs the interpreter has started in hc's
// shell (its $!, gN, is the last).
func jobCount(ctx context.Context, hc interp.HandlerContext) int {
	hc.Builtin(ctx, []string{"eval", countVar + "=${!:-}"}) // gN, or empty (and no error under set -u)
	n, _ := strconv.Atoi(strings.TrimPrefix(hc.Env.Get(countVar).String(), "g"))
	return n
}

// startJob is job.StartCall: in the shell that is about to start a job,
// it registers the job and sets what the job's interpreter takes with it.
// The job's number (%N) is one more than the highest of the shell's jobs
// not yet forgotten, as in bash.
func (bs *Set) startJob(ctx context.Context, hc interp.HandlerContext, args []string) error {
	text := strings.Join(args[1:], " ")
	n := jobCount(ctx, hc) + 1
	num := 1
	for _, sj := range bs.shellJobs(ctx, hc) {
		if sj.live() && sj.num >= num {
			num = sj.num + 1
		}
	}
	t := &bs.jobs
	t.mu.Lock()
	t.seq++
	id := strconv.Itoa(t.seq)
	if t.jobs == nil {
		t.jobs = map[string]*bgJob{}
	}
	t.jobs[id] = &bgJob{text: text, parent: job.Of(hc.Env)}
	t.mu.Unlock()
	return hc.Builtin(ctx, []string{"eval", fmt.Sprintf(`%s=%s; %s="${%s:-} %d:%s:%d"`, job.JobVar, id, jobsVar, jobsVar, n, id, num)})
}

// endJob is job.EndCall: the job it runs in is over, with the status
// before it, which it keeps.
func (bs *Set) endJob(hc interp.HandlerContext) error {
	status := hc.LastExitStatus
	if b := bs.jobs.get(job.Of(hc.Env)); b != nil {
		bs.jobs.mu.Lock()
		if b.killed != 0 {
			// Ended by kill %N, whatever its last command did (a wait
			// for the jobs it started): a killed subshell's status.
			status = 128 + int(b.killed)
		}
		b.done, b.status = true, status
		bs.jobs.mu.Unlock()
	}
	return exitStatus(status)
}

func (t *jobTable) get(id string) *bgJob {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.jobs[id]
}

// killed is the signal kill %N ended the job of hc's shell with, if it
// did (0 if not, or in the foreground).
func (t *jobTable) killed(hc interp.HandlerContext) syscall.Signal {
	id := job.Of(hc.Env)
	if id == "" {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.jobs[id]; b != nil {
		return b.killed
	}
	return 0
}

// Killed is the signal kill %N ended the job of hc's shell with, if it
// did (0 if not, or in the foreground): the exec handler's check before
// a command runs.
func (bs *Set) Killed(hc interp.HandlerContext) syscall.Signal { return bs.jobs.killed(hc) }

// A shellJob is a job of one shell: the interpreter's number for it (gN,
// as $! says), bash's (%N), and wsh's.
type shellJob struct {
	n, num int
	id     string
	*bgJob
}

// live says whether the job is in the shell's table: running. (A
// non-interactive bash forgets an ended job at its next command: jobs
// does not show it, and its number is free again.)
func (sj shellJob) live() bool { return sj.bgJob != nil && !sj.done }

// shellJobs are the jobs of hc's shell, in the order they started.
func (bs *Set) shellJobs(ctx context.Context, hc interp.HandlerContext) []shellJob {
	count := jobCount(ctx, hc)
	byN := map[int]shellJob{}
	for _, w := range strings.Fields(hc.Env.Get(jobsVar).String()) {
		f := strings.Split(w, ":")
		if len(f) != 3 {
			continue
		}
		n, err1 := strconv.Atoi(f[0])
		num, err2 := strconv.Atoi(f[2])
		// A subshell that started no job of its own sees its parent's
		// (jobs in a pipeline or $(...), as in bash); one that did
		// numbers its own from 1, as the interpreter does.
		if err1 == nil && err2 == nil && n >= 1 && (count == 0 || n <= count) {
			byN[n] = shellJob{n: n, num: num, id: f[1]} // the last word for n is in force
		}
	}
	var out []shellJob
	bs.jobs.mu.Lock()
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		sj := byN[n]
		if b := bs.jobs.jobs[sj.id]; b != nil {
			copied := *b
			sj.bgJob = &copied
			out = append(out, sj)
		}
	}
	bs.jobs.mu.Unlock()
	return out
}

// resolveJob is the job of hc's shell that spec names: %N, %%, %+, %,
// %-, %PREFIX, %?TEXT (of the jobs in its table), or gN ($!).
func (bs *Set) resolveJob(ctx context.Context, hc interp.HandlerContext, spec string) (shellJob, error) {
	jobs := bs.shellJobs(ctx, hc)
	var live []shellJob
	for _, sj := range jobs {
		if sj.live() {
			live = append(live, sj)
		}
	}
	none := fmt.Errorf("%s: no such job", spec)
	if n, ok := strings.CutPrefix(spec, "g"); ok {
		i, err := strconv.Atoi(n)
		if k := slices.IndexFunc(jobs, func(sj shellJob) bool { return sj.n == i }); err == nil && k >= 0 {
			return jobs[k], nil
		}
		return shellJob{}, none
	}
	rest, ok := strings.CutPrefix(spec, "%")
	if !ok {
		return shellJob{}, fmt.Errorf("%s: not a job", spec)
	}
	var found []shellJob
	switch {
	case rest == "" || rest == "%" || rest == "+":
		found = live[max(len(live)-1, 0):]
	case rest == "-":
		found = live[max(len(live)-2, 0):min(max(len(live)-1, 1), len(live))]
	default:
		for _, sj := range live {
			q, contains := strings.CutPrefix(rest, "?")
			i, err := strconv.Atoi(rest)
			switch {
			case err == nil:
				if sj.num == i {
					found = append(found, sj)
				}
			case contains && strings.Contains(sj.text, q), !contains && strings.HasPrefix(sj.text, rest):
				found = append(found, sj)
			}
		}
	}
	switch len(found) {
	case 0:
		return shellJob{}, none
	case 1:
		return found[0], nil
	}
	return shellJob{}, fmt.Errorf("%s: ambiguous job spec", spec)
}

// endedJob is, for wait, the job %N names that has ended and was not
// waited for yet: its status is still to be had (kill %1; wait %1),
// however soon it ended.
func (bs *Set) endedJob(ctx context.Context, hc interp.HandlerContext, spec string) (shellJob, error) {
	i, err := strconv.Atoi(strings.TrimPrefix(spec, "%"))
	if err == nil {
		jobs := bs.shellJobs(ctx, hc)
		for k := len(jobs) - 1; k >= 0; k-- {
			if sj := jobs[k]; sj.num == i && sj.done && !sj.reported {
				return sj, nil
			}
		}
	}
	return shellJob{}, fmt.Errorf("%s: no such job", spec)
}

// isJobSpec says whether a kill or wait operand names a job.
func isJobSpec(s string) bool {
	if strings.HasPrefix(s, "%") {
		return true
	}
	n, ok := strings.CutPrefix(s, "g")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// terminates says whether sig's default action ends a process.
func terminates(sig syscall.Signal) bool {
	switch sig {
	case 0, unix.SIGCHLD, unix.SIGCONT, unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGURG, unix.SIGWINCH:
		return false
	}
	return true
}

// killJob sends sig to every command of the job running now, and, when
// sig ends a process, ends the job at its next command. It fails for a
// job that has ended.
//
// SIGINT and SIGQUIT do nothing to a job: bash starts a script's jobs
// with both ignored. The jobs the job started get the signal too (bash
// would end the job's subshell, which waits for them).
func (bs *Set) killJob(id string, sig syscall.Signal) bool {
	b := bs.jobs.get(id)
	if b == nil {
		return false
	}
	bs.jobs.mu.Lock()
	if b.done {
		bs.jobs.mu.Unlock()
		return false
	}
	if sig == unix.SIGINT || sig == unix.SIGQUIT {
		bs.jobs.mu.Unlock()
		return true
	}
	if terminates(sig) && b.killed == 0 {
		b.killed = sig
	}
	var children []string
	for cid, c := range bs.jobs.jobs {
		if c.parent == id && !c.done {
			children = append(children, cid)
		}
	}
	bs.jobs.mu.Unlock()
	if sig != 0 {
		bs.core.Signal(id, sig)
	}
	for _, cid := range children {
		bs.killJob(cid, sig)
	}
	return true
}

// kill is bash's kill builtin. Job specs (%N, $!) are wsh's: the job's
// commands get the signal, in the jail as anywhere; -l is wsh's too.
// Process ids go to the kill command in the jail, after --, which can
// reach only what the jail shows (wsh itself, on the host, never signals
// a pid a script names).
func (bs *Set) kill(ctx context.Context, hc interp.HandlerContext, args []string) error {
	usage := "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]"
	sig := syscall.SIGTERM
	ops := args[1:]
	for len(ops) > 0 && strings.HasPrefix(ops[0], "-") && len(ops[0]) > 1 {
		o := ops[0]
		if o == "--" {
			ops = ops[1:]
			break
		}
		switch o {
		case "-l", "-L":
			return bs.listSignals(hc, ops[1:])
		case "-s", "-n":
			if len(ops) < 2 {
				fmt.Fprintf(hc.Stderr, "kill: %s: option requires an argument\n%s\n", o, usage)
				return interp.ExitStatus(2)
			}
			o, ops = "-"+ops[1], ops[1:]
		}
		s, ok := parseSignal(o[1:])
		if !ok {
			fmt.Fprintf(hc.Stderr, "kill: %s: invalid signal specification\n", o[1:])
			return interp.ExitStatus(1)
		}
		sig, ops = s, ops[1:]
	}
	if len(ops) == 0 {
		fmt.Fprintln(hc.Stderr, usage)
		return interp.ExitStatus(2)
	}
	status := 0
	var pids []string
	for _, op := range ops {
		if !isJobSpec(op) {
			pids = append(pids, op)
			continue
		}
		sj, err := bs.resolveJob(ctx, hc, op)
		if err == nil && !bs.killJob(sj.id, sig) {
			err = fmt.Errorf("%s: no such job", op)
		}
		if err != nil {
			fmt.Fprintf(hc.Stderr, "kill: %v\n", err)
			status = 1
		}
	}
	if len(pids) > 0 {
		// -- first: a pid like -12345 (a group) is no option of the
		// kill command's (procps would read it as -1).
		err := bs.core.External(ctx, append([]string{"kill", "-s", signalName(sig), "--"}, pids...))
		if err != nil {
			return err
		}
	}
	return exitStatus(status)
}

// listSignals is kill -l: the table, or each operand's name for a number
// (or a status 128+N) and number for a name.
func (bs *Set) listSignals(hc interp.HandlerContext, ops []string) error {
	if len(ops) == 0 {
		var b strings.Builder
		for i := 1; i <= 31; i++ {
			fmt.Fprintf(&b, "%2d) SIG%-8s", i, signalName(syscall.Signal(i)))
			if i%5 == 0 || i == 31 {
				b.WriteString("\n")
			} else {
				b.WriteString("\t")
			}
		}
		fmt.Fprint(hc.Stdout, b.String())
		return nil
	}
	status := 0
	for _, op := range ops {
		if n, err := strconv.Atoi(op); err == nil {
			if n > 128 {
				n -= 128
			}
			if name := signalName(syscall.Signal(n)); n > 0 && n < 65 && name != "" {
				fmt.Fprintln(hc.Stdout, name)
				continue
			}
		} else if s, ok := parseSignal(op); ok {
			fmt.Fprintln(hc.Stdout, int(s))
			continue
		}
		fmt.Fprintf(hc.Stderr, "kill: %s: invalid signal specification\n", op)
		status = 1
	}
	return exitStatus(status)
}

// parseSignal reads a signal as kill takes it: a number, or a name with
// or without SIG, in any case.
func parseSignal(s string) (syscall.Signal, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return syscall.Signal(n), n >= 0 && n < 65
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig := unix.SignalNum("SIG" + name); sig != 0 {
		return sig, true
	}
	return 0, false
}

// signalName is sig's name without SIG ("TERM"), or its number.
func signalName(sig syscall.Signal) string {
	if sig == 0 {
		return "0"
	}
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}

// jobs is bash's jobs builtin, for the jobs of the shell it runs in:
// running ones, and ended ones once (after which they are forgotten).
func (bs *Set) jobsBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	running, stopped := false, false
	var specs []string
	for _, a := range args[1:] {
		switch a {
		case "-r":
			running = true
		case "-s":
			stopped = true
		case "-l", "-p", "-n", "-x":
			fmt.Fprintf(hc.Stderr, "wsh: jobs: %s: not supported: a job in wsh is no process of wsh's (its commands run in the jail)\n", a)
			return interp.ExitStatus(2)
		default:
			specs = append(specs, a)
		}
	}
	var live []shellJob
	for _, sj := range bs.shellJobs(ctx, hc) {
		if sj.live() {
			live = append(live, sj)
		}
	}
	show := live
	if len(specs) > 0 {
		show = nil
		for _, s := range specs {
			sj, err := bs.resolveJob(ctx, hc, s)
			if err != nil {
				fmt.Fprintf(hc.Stderr, "jobs: %v\n", err)
				return interp.ExitStatus(1)
			}
			show = append(show, sj)
		}
	}
	for _, sj := range show {
		if stopped || sj.done && running {
			continue // no job is ever stopped: no terminal stops it
		}
		mark := ' '
		switch {
		case len(live) > 0 && sj.n == live[len(live)-1].n:
			mark = '+'
		case len(live) > 1 && sj.n == live[len(live)-2].n:
			mark = '-'
		}
		state, amp := "Running", " &"
		if sj.done {
			state, amp = jobState(sj.status), ""
			bs.jobs.mu.Lock()
			bs.jobs.jobs[sj.id].reported = true
			bs.jobs.mu.Unlock()
		}
		fmt.Fprintf(hc.Stdout, "[%d]%c  %-24s%s%s\n", sj.num, mark, state, sj.text, amp)
	}
	return nil
}

// jobState is how jobs shows an ended job's status, as bash does.
func jobState(status int) string {
	switch {
	case status == 0:
		return "Done"
	case status > 128 && status < 128+65:
		switch sig := syscall.Signal(status - 128); sig {
		case unix.SIGTERM:
			return "Terminated"
		case unix.SIGKILL:
			return "Killed"
		case unix.SIGINT:
			return "Interrupt"
		case unix.SIGHUP:
			return "Hangup"
		default:
			return signalName(sig)
		}
	}
	return "Exit " + strconv.Itoa(status)
}

// wait is bash's wait: the interpreter's own, given the jobs as it
// numbers them (gN for %N). A job waited for is forgotten, as in bash:
// jobs does not show it.
func (bs *Set) wait(ctx context.Context, hc interp.HandlerContext, args []string) error {
	out := []string{"wait"}
	var waited []string
	for _, a := range args[1:] {
		if isJobSpec(a) {
			sj, err := bs.resolveJob(ctx, hc, a)
			if err != nil {
				sj, err = bs.endedJob(ctx, hc, a)
			}
			switch {
			case err == nil:
				a, waited = "g"+strconv.Itoa(sj.n), append(waited, sj.id)
			case !strings.HasPrefix(a, "g"):
				fmt.Fprintf(hc.Stderr, "wait: %v\n", err)
				return interp.ExitStatus(127)
			}
			// $! of a job wsh did not see start (source, a trap's
			// code): the interpreter's own wait knows it.
		}
		out = append(out, a)
	}
	if len(args) == 1 {
		for _, sj := range bs.shellJobs(ctx, hc) {
			waited = append(waited, sj.id)
		}
	}
	err := hc.Builtin(ctx, out)
	bs.jobs.mu.Lock()
	for _, id := range waited {
		if b := bs.jobs.jobs[id]; b != nil && b.done {
			b.reported = true
		}
	}
	bs.jobs.mu.Unlock()
	return err
}

// noJobControl is fg and bg: there is no terminal's job control in a
// script, in wsh as in bash.
func (bs *Set) noJobControl(ctx context.Context, hc interp.HandlerContext, args []string) error {
	fmt.Fprintf(hc.Stderr, "wsh: %s: no job control: wsh runs scripts, whose jobs have no terminal to come to\n", args[0])
	return interp.ExitStatus(2)
}

// disown is refused: every job of a run ends with it.
func (bs *Set) disown(ctx context.Context, hc interp.HandlerContext, args []string) error {
	fmt.Fprintln(hc.Stderr, "wsh: disown: not supported: every job of a run ends with the run (its jail)")
	return interp.ExitStatus(2)
}
