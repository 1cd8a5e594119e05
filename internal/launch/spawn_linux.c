// spawn_linux.c starts a jail init in fresh namespaces the way
// posix_spawn starts a program: clone with CLONE_VM|CLONE_VFORK, so the
// caller's page tables are not copied (Go's os/exec cannot do that for a
// new user namespace, and its fork cost grows with the caller's memory).
//
// The child shares the caller's memory until it execs, so it only makes
// system calls, on its own stack, and reads what wsh_spawn was given. It
// writes its own id maps (a process may map its own uid and gid in the user
// namespace it created; user_namespaces(7)). A step that fails leaves its
// errno and step in the shared struct, and the child exits 127 before
// the caller resumes.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn_linux.h"

#define STACK_SIZE (64 * 1024)

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

// ksigaction is the kernel's struct sigaction, for rt_sigaction. Only its
// handler is read, and it is written all zero (SIG_DFL), so where an
// architecture has no restorer the layout does not matter.
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static int write_file(const char *path, const char *data) {
	int fd = openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(data);
	ssize_t w = write(fd, data, n);
	int e = errno;
	close(fd);
	if (w < 0) {
		errno = e;
		return -1;
	}
	if ((size_t)w != n) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int fail(struct wsh_spawn *s, int step) {
	s->err = errno ? errno : EIO;
	s->step = step;
	_exit(127);
	return 0;
}

static int child(void *arg) {
	struct wsh_spawn *s = arg;
	errno = 0;

	// Every signal is blocked (the caller blocked them all before the
	// clone). The handlers are the caller's (Go's), in memory shared with
	// it: set them back to the default before any can run here, with the
	// system call itself, since libc refuses its own two (32 and 33).
	// SIGHUP and SIGINT stay ignored if they are (wsh started under nohup,
	// say): Go keeps those two ignored when it inherits them so, and the
	// init passes them on ignored to its target, as exec would.
	struct ksigaction dfl = {0}, old;
	for (int sig = 1; sig < _NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if ((sig == SIGHUP || sig == SIGINT) &&
		    syscall(SYS_rt_sigaction, sig, NULL, &old, sizeof old.mask) == 0 &&
		    old.handler == SIG_IGN)
			continue;
		if (syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask) < 0)
			return fail(s, WSH_STEP_SIGNALS);
	}

	if (setsid() < 0)
		return fail(s, WSH_STEP_SETSID);
	if (s->flags & CLONE_NEWUSER) {
		if (write_file("/proc/self/setgroups", "deny") < 0)
			return fail(s, WSH_STEP_SETGROUPS);
		if (write_file("/proc/self/uid_map", s->uid_map) < 0)
			return fail(s, WSH_STEP_UID_MAP);
		if (write_file("/proc/self/gid_map", s->gid_map) < 0)
			return fail(s, WSH_STEP_GID_MAP);
	}
	// SIGKILL when the calling thread dies. (A parent that died before
	// this is caught by the init's first step, which finds the sentinel's
	// read end gone; getppid() says nothing here, it is 0 in a new PID
	// namespace.)
	if (s->pdeathsig && prctl(PR_SET_PDEATHSIG, s->pdeathsig, 0, 0, 0) < 0)
		return fail(s, WSH_STEP_PDEATHSIG);

	// A uid other than 0 loses every capability at the exec of the init
	// (capabilities(7)); ambient ones survive it. The init empties every
	// set before its target runs.
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	if (s->nocaps)
		goto files;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return fail(s, WSH_STEP_CAPS);
	if (s->allcaps) {
		// Every capability of the new namespace: the home's keeper
		// mounts an overlay, which does its work on the layers with
		// the credentials of the process that mounted it.
		for (int i = 0; i < 2; i++)
			data[i].inheritable = data[i].permitted;
	} else {
		for (int i = 0; i < WSH_SPAWN_NCAPS; i++) {
			int c = s->caps[i];
			data[c / 32].permitted |= 1u << (c % 32);
			data[c / 32].inheritable |= 1u << (c % 32);
		}
	}
	if (syscall(SYS_capset, &hdr, data) < 0)
		return fail(s, WSH_STEP_CAPS);
	for (int c = 0; c < 64; c++) {
		if (!(data[c / 32].inheritable & (1u << (c % 32))))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
			return fail(s, WSH_STEP_CAPS);
	}
files:;

	// Descriptors 0..nfiles-1 from files[]: first every source, and the
	// binary to execute, moved above them, so that no dup3 below lands on one still
	// needed (a memfd numbered 3 would otherwise be replaced by the
	// sentinel, and the exec would run whatever took its place); then each
	// into place (dup3 with no flags: not close-on-exec); then every other
	// descriptor, whatever the caller left open across exec, marked
	// close-on-exec. The init gets exactly 0..nfiles-1.
	int exe = -1;
	if (s->exe_fd >= 0) {
		exe = fcntl(s->exe_fd, F_DUPFD_CLOEXEC, WSH_SPAWN_FILES);
		if (exe < 0)
			return fail(s, WSH_STEP_FILES);
	}
	int fd[WSH_SPAWN_FILES];
	for (int i = 0; i < s->nfiles; i++) {
		fd[i] = fcntl(s->files[i], F_DUPFD_CLOEXEC, WSH_SPAWN_FILES);
		if (fd[i] < 0)
			return fail(s, WSH_STEP_FILES);
	}
	for (int i = 0; i < s->nfiles; i++) {
		if (dup3(fd[i], i, 0) < 0)
			return fail(s, WSH_STEP_FILES);
	}
	// Linux 5.11; the jail's setup needs 5.12 (mount_setattr) anyway.
	if (syscall(SYS_close_range, s->nfiles, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return fail(s, WSH_STEP_FILES);

	uint64_t none = 0;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
	if (exe >= 0)
		syscall(SYS_execveat, exe, "", s->argv, s->envp, AT_EMPTY_PATH);
	else
		execve(s->path, s->argv, s->envp);
	return fail(s, WSH_STEP_EXEC);
}

// wsh_spawn starts the init and returns once it has exec'd or failed: the
// pid of the child, or -1 if the clone itself failed. When s->err is set,
// s->step says what failed, and a child that exists has exited 127 and is
// the caller's to reap.
pid_t wsh_spawn(struct wsh_spawn *s) {
	s->err = 0;
	s->step = WSH_STEP_NONE;
	void *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		s->err = errno;
		s->step = WSH_STEP_CLONE;
		return -1;
	}
	// Every signal blocked, libc's own two (32 and 33) included, which
	// pthread_sigmask would leave out.
	uint64_t all = ~(uint64_t)0, old;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all);
	pid_t pid = clone(child, (char *)stack + STACK_SIZE,
	                  CLONE_VM | CLONE_VFORK | SIGCHLD | s->flags, s);
	int e = errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
	munmap(stack, STACK_SIZE);
	if (pid < 0) {
		s->err = e;
		s->step = WSH_STEP_CLONE;
		return -1;
	}
	return pid;
}
