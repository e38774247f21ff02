package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// TestPausedWriterWithSessionsMidUpload is TestPausedWriterResumedAfterTakeover
// on OpenSSH with writer A paused (SIGSTOP) while several of its uploads are
// in flight on SFTP sessions of their own (--jobs 8, files of 8 MiB: the
// connection opens extra sessions for overlapping writes). B waits A's lease
// out, takes the lock over, recovers A's intent and publishes other bytes at
// the same paths; A, resumed, finds its fence lapsed in every session's
// write: it fails, saying it lost its lock, and changes nothing: the root
// holds exactly B's publication, no temporary file of A's is left, and
// `verify` finds every file.
func TestPausedWriterWithSessionsMidUpload(t *testing.T) {
	be := realSFTP(t) // skips (fails under CI) without the test servers
	disk := be.sftp.Root
	const files, size = 8, 8 << 20
	dir := t.TempDir()
	b2, b3 := map[string]string{}, map[string]string{}
	for i := range files {
		p := fmt.Sprintf("d%d/f%d.bin", i%3, i)
		b2[p] = strings.Repeat(fmt.Sprintf("A %d\n", i), size/4)
		b3[p] = strings.Repeat(fmt.Sprintf("B %d\n", i), size/4)
	}
	writeBundle(t, filepath.Join(dir, "b2"), "bundle.b2", b2)
	writeBundle(t, filepath.Join(dir, "b3"), "bundle.b3", b3)
	cfg := filepath.Join(dir, "distributor.yaml")
	conf := "pipelines:\n  - {id: p, source: b2, destinations: [d]}\ndestinations:\n  - id: d\n    workflow: replacement\n" + be.yaml
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	leaseD, skewD := testtime.Scale(2*time.Second), testtime.Scale(time.Second)
	w := &pausedRun{st: be.store, dir: dir, cfg: cfg, b3: b3, lease: leaseD.String(), skew: skewD.String(), takeover: leaseD + skewD}

	a := startProc(t, command(t, "run", "--config", cfg, "--pipeline", "p", "--source", filepath.Join(dir, "b2"),
		"--jobs", "8", "--lock-lease", w.lease, "--lock-skew-allowance", w.skew))
	// Pause A once two uploads are partial; one may complete between the
	// look and the signal: then A goes on, and the next moment is taken.
	deadline := time.Now().Add(15 * time.Second)
	var paused time.Time
	for {
		if temps, outputs := uploads(disk); partialOf(temps, size) >= 2 && outputs == 0 {
			if err := a.cmd.Process.Signal(sigStop); err != nil {
				t.Fatalf("SIGSTOP A: %v\n%s", err, a.output())
			}
			paused = time.Now()
			temps, outputs := uploads(disk)
			partial, sessions := partialOf(temps, size), holders(t, disk)
			t.Logf("A paused with %d temporary files (%d partial) held open by %d server sessions, %d outputs", len(temps), partial, sessions, outputs)
			if sessions >= 2 && partial >= 2 && outputs == 0 {
				break
			}
			if err := a.cmd.Process.Signal(sigCont); err != nil {
				t.Fatalf("SIGCONT A: %v\n%s", err, a.output())
			}
		}
		if _, outputs := uploads(disk); a.exited() || outputs > 0 {
			t.Fatalf("A was never paused with several sessions mid-upload and nothing published (exit %v, %d outputs): the scenario needs larger files\n%s", a.exited(), outputs, a.kill())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two partial uploads in flight 15s after A started\n%s", a.kill())
		}
		time.Sleep(100 * time.Microsecond)
	}

	outB := w.takeOverWithB(t, paused)
	outA := w.resumeA(t, a)
	defer func() {
		if t.Failed() {
			t.Logf("A's output:\n%s\nB's output:\n%s", withoutPlan(outA), withoutPlan(outB))
		}
	}()

	code, out := runProc(t, "verify", 30*time.Second, "verify", "--config", cfg, "--pipeline", "p", "--destination", "d", "--output", "json")
	var doc verifyDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || doc.OK != files || len(doc.Missing)+len(doc.Corrupt) > 0 || doc.Error != nil {
		t.Errorf("verify: exit %d, %d ok, want %d (%v)\n%s", code, doc.OK, files, err, out)
	}
	got := objects(t, be.store)
	for p := range got {
		if _, ok := b3[p]; !ok && p != catalog.FileName {
			t.Errorf("%s is at the root after both runs", p)
		}
	}
	for p, want := range b3 {
		if got[p] != want {
			t.Errorf("%s holds %d bytes that are not B's", p, len(got[p]))
		}
	}
	if temps, _ := uploads(disk); len(temps) > 0 {
		t.Errorf("temporary files left on the server: %v", temps)
	}
	if c := auditCatalog(t, be.store, false); len(c.Outputs) != files {
		t.Errorf("the catalog records %d outputs, want %d", len(c.Outputs), files)
	}
}

// partialOf counts the temporary files smaller than size.
func partialOf(temps map[string]int64, size int64) int {
	n := 0
	for _, got := range temps {
		if got < size {
			n++
		}
	}
	return n
}

// uploads looks at the root on the server's disk: the temporary files with
// their sizes, and how many outputs (files not distributor's own) there are.
func uploads(root string) (temps map[string]int64, outputs int) {
	temps = map[string]int64{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		switch {
		case storage.IsTemp(p):
			if fi, err := d.Info(); err == nil {
				temps[p] = fi.Size()
			}
		case !strings.HasPrefix(d.Name(), ".distributor"):
			outputs++
		}
		return nil
	})
	return temps, outputs
}

// holders counts the server processes (on OpenSSH one per SFTP session)
// holding a temporary file below root open.
func holders(t *testing.T, root string) int {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			l, _ := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if strings.HasPrefix(l, root+"/") && storage.IsTemp(l) {
				n++
				break
			}
		}
	}
	return n
}
