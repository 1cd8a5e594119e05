package proto

import "errors"

// FilesArg0 is the argv[0] with which the jail's file server runs: a
// command of the jail (the session's, or one of its own with
// WSH_JAIL=command) that does the shell's own file access, so that a
// redirection, a glob, cd, test and source see exactly what a command
// sees. Its standard input is its end of a SOCK_SEQPACKET socketpair whose
// other end only wsh holds.
const FilesArg0 = "wsh-jail-files"

// The kinds of file request, each one datagram. Open opens Path with
// Flags and Mode (the mode of a file it makes, umask already applied: the
// server's umask is 0) and answers with the descriptor; Access checks
// Path for Mode (R_OK, W_OK, X_OK) with the effective ids (AT_EACCESS);
// Resolve answers with the path Path leads to (its symlinks followed, a
// missing last component or a dangling last symlink's target included).
const (
	FileOpen    byte = 'O'
	FileAccess  byte = 'A'
	FileResolve byte = 'R'
)

// MaxFileRequest bounds one request: a path is at most PATH_MAX (4096)
// for the kernel; the shell's can be longer only to be refused.
const MaxFileRequest = 1 + 8 + 4 + 4 + 4 + 64<<10

// A FileRequest is one operation for the file server.
type FileRequest struct {
	Kind  byte
	ID    uint64
	Flags uint32
	Mode  uint32
	Path  string
}

// A FileAnswer answers the request ID: Errno 0 and, for Open, one
// descriptor sent with it (SCM_RIGHTS), for Resolve the Path; else the
// errno of the call. The server's first answer has ID 0 (no request has
// it) and a pidfd of the server (or the errno of pidfd_open).
type FileAnswer struct {
	ID    uint64
	Errno uint32
	Path  string
}

// MaxFileAnswer bounds an encoded FileAnswer.
const MaxFileAnswer = 8 + 4 + 4 + 2*4096

var errFileMsg = errors.New("files: malformed message")

// Encode is the wire form of r.
func (r FileRequest) Encode() ([]byte, error) {
	var e encoder
	e.b = append(e.b, r.Kind)
	e.u64(r.ID)
	e.u32(r.Flags)
	e.u32(r.Mode)
	e.str(r.Path)
	if len(e.b) > MaxFileRequest {
		return nil, errors.New("files: path too long")
	}
	return e.b, nil
}

// DecodeFileRequest decodes a request.
func DecodeFileRequest(b []byte) (FileRequest, error) {
	if len(b) == 0 || len(b) > MaxFileRequest || (b[0] != FileOpen && b[0] != FileAccess && b[0] != FileResolve) {
		return FileRequest{}, errFileMsg
	}
	d := decoder{b: b[1:]}
	r := FileRequest{Kind: b[0], ID: d.u64(), Flags: d.u32(), Mode: d.u32(), Path: d.str()}
	if d.bad || len(d.b) != 0 || r.Path == "" {
		return FileRequest{}, errFileMsg
	}
	return r, nil
}

// Encode is the wire form of a.
func (a FileAnswer) Encode() []byte {
	var e encoder
	e.u64(a.ID)
	e.u32(a.Errno)
	e.str(a.Path)
	return e.b
}

// DecodeFileAnswer decodes an answer.
func DecodeFileAnswer(b []byte) (FileAnswer, error) {
	if len(b) > MaxFileAnswer {
		return FileAnswer{}, errFileMsg
	}
	d := decoder{b: b}
	a := FileAnswer{ID: d.u64(), Errno: d.u32(), Path: d.str()}
	if d.bad || len(d.b) != 0 {
		return FileAnswer{}, errFileMsg
	}
	return a, nil
}
