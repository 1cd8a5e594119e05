package proto

// SeccompNotif is the kernel's struct seccomp_notif, and SeccompNotifResp
// its struct seccomp_notif_resp (seccomp_unotify(2)): what a listener of
// wsh's reads and answers (the lower rungs' zygote, wsh's rename mediator).
type SeccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type SeccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}
