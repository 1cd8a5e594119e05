// spawn_linux.h: the C side of wrap's start of a jail init. See
// spawn_linux.c.
#include <sys/types.h>

enum {
	WSH_SPAWN_FILES = 11, // at most descriptors 0..10 of the init
	WSH_SPAWN_NCAPS = 4,
};

// The steps of a start, as reported in step when err is set.
enum {
	WSH_STEP_NONE,
	WSH_STEP_CLONE,
	WSH_STEP_SIGNALS,
	WSH_STEP_SETSID,
	WSH_STEP_SETGROUPS,
	WSH_STEP_UID_MAP,
	WSH_STEP_GID_MAP,
	WSH_STEP_PDEATHSIG,
	WSH_STEP_CAPS,
	WSH_STEP_FILES,
	WSH_STEP_EXEC,
};

struct wsh_spawn {
	// In: what to run, and how. exe_fd, if not -1, is executed (execveat
	// with AT_EMPTY_PATH) rather than path.
	int exe_fd;
	const char *path;
	char *const *argv;
	char *const *envp;
	int files[WSH_SPAWN_FILES];
	int nfiles; // how many of files the init gets, as 0..nfiles-1
	unsigned long flags; // CLONE_NEW* flags
	int pdeathsig;       // SIGKILL at the parent's death, or 0
	const char *uid_map;
	const char *gid_map;
	int caps[WSH_SPAWN_NCAPS]; // raised into the ambient set
	int allcaps;               // raise every permitted capability instead
	int nocaps;                // raise none (no new user namespace)
	// Out: set by the child when a step before the exec fails.
	volatile int err;
	volatile int step;
};

pid_t wsh_spawn(struct wsh_spawn *s);
