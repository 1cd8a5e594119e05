//go:build linux && cgo

package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// testStartTime stands for the start time of a process that the Jailer
// gives KeepLedgers (proc(5)'s field 22): this process's is a fixed tick,
// and every other pid has none (it is gone).
func testStartTime(pid int) (uint64, error) {
	if pid != os.Getpid() {
		return 0, fs.ErrNotExist
	}
	return 1000, nil
}

// TestPlaceholdersEnd: at the run's end wsh removes the placeholders it
// made that are as it made them, and keeps one written to, one another
// lock holder still uses (noted in the ledger, as NAME.closed), and one
// replaced by another with its name.
func TestPlaceholdersEnd(t *testing.T) {
	dir, ledgerDir := t.TempDir(), t.TempDir()
	ph := newPlaceholders(ledgerDir, testStartTime, func(s string) { t.Error(s) })
	mk := func(name string, kind placeholder) string {
		p := filepath.Join(dir, name)
		if _, err := ph.make(p, kind); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain, written, held, replaced := mk("plain", makeDir), mk("written", makeDir), mk("held", makeDir), mk("replaced", makeEmptyFile)
	common := mk("commondir", makeCommondir)
	if err := os.WriteFile(filepath.Join(written, "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(held) // another run's shared lock
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	os.Remove(replaced)
	os.WriteFile(replaced, nil, 0o644)
	ph.end(false)
	for p, want := range map[string]bool{plain: false, common: false, written: true, held: true, replaced: true} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: there %v after the end, want %v", filepath.Base(p), err == nil, want)
		}
	}
	ents, _ := os.ReadDir(ledgerDir)
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), closedSuffix) {
		t.Fatalf("the ledger after the end: %v", ents)
	}
	b, _ := os.ReadFile(filepath.Join(ledgerDir, ents[0].Name()))
	if strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), `"`+held+`"`) {
		t.Errorf("the ledger keeps %q, want only %s", b, held)
	}
	// Once the other lock is gone, the next run removes it.
	other.Close()
	newPlaceholders(ledgerDir, testStartTime, nil)
	if _, err := os.Lstat(held); err == nil {
		t.Errorf("the next run did not remove %s", held)
	}
	if ents, _ := os.ReadDir(ledgerDir); len(ents) != 0 {
		t.Errorf("the ledger after the next run: %v", ents)
	}
}

// TestLedgerSweepsGoneRunsOnly: a run's file is swept when its process
// is gone (a pid and start time no process has), not while it runs.
func TestLedgerSweepsGoneRunsOnly(t *testing.T) {
	dir, ledgerDir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, ".vscode")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	line := formatEntry(madePlaceholder{path: p, id: statInode(&st)})
	start, err := testStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	alive := filepath.Join(ledgerDir, fmt.Sprintf("%d-%d-99", os.Getpid(), start))
	os.WriteFile(alive, []byte(line), 0o600)
	newPlaceholders(ledgerDir, testStartTime, nil)
	if _, err := os.Lstat(p); err != nil {
		t.Fatalf("a placeholder of a run still running was removed")
	}
	os.Rename(alive, filepath.Join(ledgerDir, fmt.Sprintf("%d-%d-99", os.Getpid(), start+1)))
	newPlaceholders(ledgerDir, testStartTime, nil)
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("a placeholder of a run that is gone was not removed")
	}
}

// TestSettleAPathGoneMeanwhile: a protected path found, then removed (by
// another run ending, or the user) before wsh holds it, is looked at
// again, and, missing where wsh makes nothing, is said missing: wsh does
// not hold what is not there (it panicked on it, with several runs in one
// project).
func TestSettleAPathGoneMeanwhile(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(other) // what was found there, before it went
	if err != nil {
		t.Fatal(err)
	}
	p := &Protector{ph: newPlaceholders(t.TempDir(), testStartTime, nil)}
	got, err := p.settle(filepath.Join(dir, ".vscode"), makeNone, fi, nil)
	if got != nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("settle of a path gone meanwhile: %v, %v; want nothing there", got, err)
	}
}
