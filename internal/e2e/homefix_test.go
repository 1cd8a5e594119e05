//go:build linux && cgo

package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A realHome is a home directory as a user has one: under /home on the
// host's disk (not a fresh directory in /tmp), owned by the user, with
// files hours old, a Go module cache, a Go build cache and an npm cache
// filled on the host by the user's own tools before any jail runs.
type realHome struct {
	u        user
	dir      string // $HOME
	proj     string // $HOME/proj: a Go module with a test and a dependency
	registry string // the npm registry the npm cache was filled from
	wheel    string // a local Python wheel, for pip install --user
}

// The fixtures' file names and contents.
const (
	depModule  = "example.com/wshdep"
	npmPackage = "wsh-demo-pkg"
	hostGitcfg = "[user]\n\tname = Host User\n\temail = host@example.invalid\n"
	sshSecret  = "host secret key\n"
)

var homes struct {
	sync.Mutex
	made map[string]*homeBuild
}

type homeBuild struct {
	once sync.Once
	home *realHome
	err  error
}

// userHome returns u's home fixture, made once for the test binary and
// removed by TestMain's cleanup of the process (t.Cleanup of the first
// test that asked for it would remove it too early).
func userHome(t *testing.T, u user) *realHome {
	t.Helper()
	homes.Lock()
	if homes.made == nil {
		homes.made = map[string]*homeBuild{}
	}
	b := homes.made[u.name]
	if b == nil {
		b = &homeBuild{}
		homes.made[u.name] = b
	}
	homes.Unlock()
	b.once.Do(func() { b.home, b.err = makeHome(u) })
	if b.err != nil {
		t.Fatalf("the home fixture of %s: %v", u.name, b.err)
	}
	return b.home
}

// removeHomes removes every home fixture; TestMain calls it last.
func removeHomes() {
	homes.Lock()
	defer homes.Unlock()
	for _, b := range homes.made {
		if h := b.home; h != nil {
			// The keeper of the jail's home may still hold it: ask it to
			// go (wsh home reset, as the home's user, in that home).
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			wshCmd(ctx, h.u, h.proj, h.env(), "home", "reset").Run()
			cancel()
			os.RemoveAll(h.dir)
		}
	}
}

func makeHome(u user) (*realHome, error) {
	dir, err := os.MkdirTemp("/home", "wsh-e2e-"+u.name+"-")
	if err != nil {
		return nil, err
	}
	h := &realHome{u: u, dir: dir, proj: filepath.Join(dir, "proj")}
	steps := []func() error{h.dotfiles, h.goFixtures, h.npmFixture, h.pipFixture, h.own, h.age}
	for _, s := range steps {
		if err := s(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return h, nil
}

// write creates a file (and its directories) in the home.
func (h *realHome) write(rel, content string, mode fs.FileMode) error {
	p := filepath.Join(h.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), mode)
}

// dotfiles are what a home holds besides caches: a git identity, a shell
// profile, a secret, and XDG's state directory with another tool's file.
func (h *realHome) dotfiles() error {
	files := []struct {
		rel, content string
		mode         fs.FileMode
	}{
		{".gitconfig", hostGitcfg, 0o644},
		{".profile", "# the host's profile\n", 0o644},
		{".ssh/id_test", sshSecret, 0o600},
		{".local/state/lesshst", ".less-history-file:\n", 0o600},
		{".config/wsh-e2e/settings", "host=1\n", 0o644},
	}
	for _, f := range files {
		if err := h.write(f.rel, f.content, f.mode); err != nil {
			return err
		}
	}
	return os.Chmod(filepath.Join(h.dir, ".ssh"), 0o700)
}

// goFixtures makes a module proxy on disk with one module, a project that
// depends on it, and fills the user's module cache and build cache on the
// host with the user's own go: the state a developer's home is in.
func (h *realHome) goFixtures() error {
	proxy, err := os.MkdirTemp("", "wsh-e2e-goproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(proxy)
	if err := writeModuleProxy(proxy); err != nil {
		return err
	}
	if err := writeGoProject(h.proj, "proj", depModule); err != nil {
		return err
	}
	if err := h.own(); err != nil {
		return err
	}
	os.Chmod(proxy, 0o755)
	env := []string{"GOPROXY=file://" + proxy, "GOSUMDB=off", "GOFLAGS=-mod=mod"}
	// go mod tidy downloads the dependency into the module cache and
	// writes go.sum; go build fills the build cache (the standard library
	// and the dependency), but not the project's test.
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "./..."}} {
		if out, err := h.hostCmd(h.proj, env, "go", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("go %s on the host: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// writeGoProject writes a module with a package, its test and a main; dep,
// if not empty, is a module it imports.
func writeGoProject(dir, name, dep string) error {
	imp, use := "", `"hello"`
	if dep != "" {
		imp, use = fmt.Sprintf("import %q\n", dep), "wshdep.Hello()"
	}
	files := map[string]string{
		"go.mod":          fmt.Sprintf("module example.com/%s\n\ngo 1.22\n", name),
		"lib.go":          fmt.Sprintf("package %s\n\n%s\n// Greeting is what the program says.\nfunc Greeting() string { return %s }\n", name, imp, use),
		"lib_test.go":     fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif Greeting() != \"hello\" {\n\t\tt.Fatal(Greeting())\n\t}\n}\n", name),
		"cmd/app/main.go": fmt.Sprintf("package main\n\nimport (\n\t\"fmt\"\n\n\tp \"example.com/%s\"\n)\n\nfunc main() { fmt.Println(p.Greeting()) }\n", name),
	}
	if dep != "" {
		files["go.mod"] += fmt.Sprintf("\nrequire %s v1.0.0\n", dep)
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeModuleProxy lays out a GOPROXY=file:// directory with depModule
// v1.0.0.
func writeModuleProxy(root string) error {
	v := filepath.Join(root, depModule, "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		return err
	}
	mod := "module " + depModule + "\n\ngo 1.22\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, content := range map[string]string{
		"go.mod": mod,
		"dep.go": "package wshdep\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
	} {
		w, err := zw.Create(depModule + "@v1.0.0/" + name)
		if err != nil {
			return err
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		return err
	}
	files := map[string][]byte{
		"list":        []byte("v1.0.0\n"),
		"v1.0.0.info": []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`),
		"v1.0.0.mod":  []byte(mod),
		"v1.0.0.zip":  zb.Bytes(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(v, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// npmFixture serves one package from a registry on loopback and fills the
// user's npm cache from it on the host, with the user's own npm; the
// registry is gone before any jail runs.
func (h *realHome) npmFixture() error {
	if _, err := exec.LookPath("npm"); err != nil {
		return nil // the npm checks say so
	}
	tgz, err := npmTarball()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h.registry = "http://" + l.Addr().String() + "/"
	sha1sum := sha1.Sum(tgz)
	sha512sum := sha512.Sum512(tgz)
	tarURL := h.registry + npmPackage + "/-/" + npmPackage + "-1.0.0.tgz"
	packument := fmt.Sprintf(`{"name":%q,"dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":`+
		`{"name":%q,"version":"1.0.0","main":"index.js","dist":{"tarball":%q,"shasum":%q,"integrity":"sha512-%s"}}}}`,
		npmPackage, npmPackage, tarURL, hex.EncodeToString(sha1sum[:]), base64.StdEncoding.EncodeToString(sha512sum[:]))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + npmPackage:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(packument))
		case "/" + npmPackage + "/-/" + npmPackage + "-1.0.0.tgz":
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(l)
	defer srv.Close()
	if err := h.own(); err != nil {
		return err
	}
	cmd := h.hostCmd(h.dir, npmEnv, "npm", "cache", "add", npmPackage+"@1.0.0", "--registry="+h.registry)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm cache add on the host: %v\n%s", err, out)
	}
	return nil
}

// npmEnv keeps npm from reaching for the network on its own.
var npmEnv = []string{"NPM_CONFIG_UPDATE_NOTIFIER=false", "NPM_CONFIG_AUDIT=false", "NPM_CONFIG_FUND=false"}

func npmTarball() ([]byte, error) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, content := range map[string]string{
		"package/package.json": fmt.Sprintf(`{"name":%q,"version":"1.0.0","main":"index.js"}`, npmPackage),
		"package/index.js":     "module.exports = { value: 42 };\n",
	} {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(1700000000, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		tw.Write([]byte(content))
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pipFixture writes a local wheel into the project directory.
func (h *realHome) pipFixture() error {
	files := []struct{ name, content string }{
		{"wshdemo/__init__.py", "VALUE = 42\n"},
		{"wshdemo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: wshdemo\nVersion: 1.0\n"},
		{"wshdemo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: wsh-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			return err
		}
		w.Write([]byte(f.content))
		sum := sha256.Sum256([]byte(f.content))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.content))
	}
	record.WriteString("wshdemo-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("wshdemo-1.0.dist-info/RECORD")
	if err != nil {
		return err
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		return err
	}
	h.wheel = filepath.Join(h.proj, "dist", "wshdemo-1.0-py3-none-any.whl")
	if err := os.MkdirAll(filepath.Dir(h.wheel), 0o755); err != nil {
		return err
	}
	return os.WriteFile(h.wheel, zb.Bytes(), 0o644)
}

// own gives the whole home to its user.
func (h *realHome) own() error {
	if h.u.uid < 0 {
		return nil
	}
	if err := os.Chmod(h.dir, 0o755); err != nil {
		return err
	}
	return filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, h.u.uid, h.u.uid)
	})
}

// age makes every file of the home two hours old, as a home's files are.
func (h *realHome) age() error {
	old := time.Now().Add(-2 * time.Hour)
	return filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return os.Chtimes(p, old, old)
	})
}

// hostCmd runs a program as the home's user on the host, unconfined, as
// that user would in a terminal.
func (h *realHome) hostCmd(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/go/bin", "HOME=" + h.dir,
		"GOTOOLCHAIN=local"}, env...)
	if h.u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(h.u.uid), Gid: uint32(h.u.uid)}}
	}
	return cmd
}

// env is what a jailed command of this home gets besides PATH.
func (h *realHome) env(extra ...string) []string {
	return append([]string{"HOME=" + h.dir, "GOTOOLCHAIN=local", "GOPROXY=off", "GOSUMDB=off", "GOFLAGS="}, extra...)
}

// stateDir is wsh's state directory in this home (XDG's default).
func (h *realHome) stateDir() string { return filepath.Join(h.dir, ".local", "state", "wsh") }

// A snapshot is a listing of a tree: each path with its type and mode,
// size, mtime and symlink target.
type snapshot map[string]string

// snap lists the home, without the directories given (relative paths)
// and what lies beneath them.
func (h *realHome) snap(t *testing.T, skip ...string) snapshot {
	t.Helper()
	s := snapshot{}
	err := filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(h.dir, p)
		for _, k := range skip {
			if rel == k {
				return filepath.SkipDir
			}
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		s[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// diff lists what differs between two snapshots, one line a path.
func (s snapshot) diff(after snapshot) []string {
	var out []string
	for k, v := range s {
		switch w, ok := after[k]; {
		case !ok:
			out = append(out, "removed: "+k)
		case w != v:
			out = append(out, fmt.Sprintf("changed: %s: %s -> %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := s[k]; !ok {
			out = append(out, "added: "+k)
		}
	}
	sort.Strings(out)
	return out
}
