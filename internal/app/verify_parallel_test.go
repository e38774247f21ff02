package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

const verifyYAML = `pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
    backend: local
    path: www
    workflow: replacement
`

// verifyRoot publishes 60 outputs in 6 directories through a (the store
// a opens), then damages them on disk under root: same-size changes,
// size changes and removals, spread so that parallel workers meet them in
// any order. It returns the paths it damaged by kind.
func verifyRoot(t *testing.T, f *fixture, a *App, root string) (sameSize, resized, removed []string) {
	t.Helper()
	files := map[string]string{}
	for d := range 6 {
		for i := range 10 {
			files[fmt.Sprintf("d%d/f%02d.txt", d, i)] = fmt.Sprintf("content of d%d/f%02d, %0*d", d, i, i*50, 0)
		}
	}
	f.bundle("mine", "mine.one", files)
	if d := f.run(a, "mine"); d.Status != report.StatusOK {
		t.Fatalf("run: %s %v", d.Status, str(d.Error))
	}
	write := func(p, content string) {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"d0/f03.txt", "d2/f09.txt", "d5/f00.txt"} {
		b := []byte(files[p])
		b[0] ^= 0x20 // same size, other bytes
		write(p, string(b))
		sameSize = append(sameSize, p)
	}
	for _, p := range []string{"d1/f01.txt", "d4/f07.txt"} {
		write(p, files[p]+" and more")
		resized = append(resized, p)
	}
	write("d3/f05.txt", "short")
	resized = append(resized, "d3/f05.txt")
	for _, p := range []string{"d1/f08.txt", "d3/f00.txt", "d5/f09.txt"} {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
		removed = append(removed, p)
	}
	write("unmanaged.txt", "not recorded") // not verify's business
	return sameSize, resized, removed
}

// TestVerifyParallelMatchesSequential: whatever the number of jobs, verify
// reports exactly what a one-at-a-time verify reports (same lists, same
// order, same counts), on a local root and on the real sshd.
func TestVerifyParallelMatchesSequential(t *testing.T) {
	for _, backend := range []string{"local", "sshd"} {
		t.Run(backend, func(t *testing.T) {
			f := yamlFixture(t, verifyYAML)
			a := f.app(nil)
			root := f.root
			if backend == "sshd" {
				login := sftptest.SSHD(t).FreshRoot(t)
				opts := sftpOptions(login)
				root = login.Root
				a.Open = func(ctx context.Context, _ *config.Destination, _ string) (storage.Store, error) {
					return sftp.New(ctx, opts)
				}
			}
			sameSize, resized, removed := verifyRoot(t, f, a, root)
			verify := func(jobs int) *report.Verify {
				t.Helper()
				rep, err := a.Verify(context.Background(), f.cfg, VerifyOptions{
					Root: Root{Pipeline: "mine", Destination: "site"}, AllOwners: true, Jobs: jobs})
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			seq := verify(1)
			if seq.Error != nil || !seq.Failed() {
				t.Fatalf("sequential verify: %+v", seq)
			}
			var gotMissing, gotCorrupt []string
			for _, m := range seq.Missing {
				gotMissing = append(gotMissing, m.Path)
			}
			for _, c := range seq.Corrupt {
				gotCorrupt = append(gotCorrupt, c.Path)
			}
			wantCorrupt := []string{"d0/f03.txt", "d1/f01.txt", "d2/f09.txt", "d3/f05.txt", "d4/f07.txt", "d5/f00.txt"}
			if diff := cmp.Diff(removed, gotMissing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantCorrupt, gotCorrupt); diff != "" {
				t.Errorf("corrupt (-want +got):\n%s", diff)
			}
			if want := 60 - len(sameSize) - len(resized) - len(removed); seq.OK != want {
				t.Errorf("ok %d, want %d", seq.OK, want)
			}
			for _, jobs := range []int{0, 2, 8, 64} {
				if diff := cmp.Diff(seq, verify(jobs)); diff != "" {
					t.Errorf("--jobs %d differs from --jobs 1 (-sequential +parallel):\n%s", jobs, diff)
				}
			}
		})
	}
}

// countingStore counts content reads and can fail the read of one path.
type countingStore struct {
	storage.Store
	opens  atomic.Int64
	failAt map[string]error
}

func (s *countingStore) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	s.opens.Add(1)
	if err := s.failAt[p]; err != nil {
		return nil, err
	}
	return s.Store.Open(ctx, p)
}

// TestVerifyQuick: --quick finds a missing file and a size change from the
// listing alone, reading no output, and (as documented) passes a change
// that keeps the size.
func TestVerifyQuick(t *testing.T) {
	f := yamlFixture(t, verifyYAML)
	var cs *countingStore
	a := f.app(func(st storage.Store) storage.Store { cs = &countingStore{Store: st}; return cs })
	sameSize, resized, removed := verifyRoot(t, f, a, f.root)
	rep, err := a.Verify(context.Background(), f.cfg, VerifyOptions{
		Root: Root{Pipeline: "mine", Destination: "site"}, Quick: true})
	if err != nil || rep.Error != nil || !rep.Quick {
		t.Fatalf("quick verify: %+v %v", rep, err)
	}
	if n := cs.opens.Load(); n != 0 {
		t.Errorf("quick verify read %d outputs, want none", n)
	}
	var gotMissing, gotCorrupt []string
	for _, m := range rep.Missing {
		gotMissing = append(gotMissing, m.Path)
	}
	for _, c := range rep.Corrupt {
		gotCorrupt = append(gotCorrupt, c.Path)
		if want := "(content not read: --quick)"; !strings.Contains(c.Actual, want) {
			t.Errorf("corrupt %s: actual %q does not say %q", c.Path, c.Actual, want)
		}
	}
	if diff := cmp.Diff(removed, gotMissing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d1/f01.txt", "d3/f05.txt", "d4/f07.txt"}, gotCorrupt); diff != "" {
		t.Errorf("size changes (-want +got):\n%s", diff)
	}
	// The documented blind spot: same-size changes count as ok.
	if want := 60 - len(resized) - len(removed); rep.OK != want {
		t.Errorf("ok %d, want %d (the %d same-size changes %v included)", rep.OK, want, len(sameSize), sameSize)
	}
	full, err := a.Verify(context.Background(), f.cfg, VerifyOptions{Root: Root{Pipeline: "mine", Destination: "site"}})
	if err != nil || len(full.Corrupt) != len(sameSize)+len(resized) {
		t.Errorf("the full verify after it finds %d corrupt, want %d: %v", len(full.Corrupt), len(sameSize)+len(resized), err)
	}
}

// TestVerifyParallelReadError: a read that fails (not a missing file) ends
// verify with that error; with several failing, the first in path order,
// as a sequential verify reports it.
func TestVerifyParallelReadError(t *testing.T) {
	f := yamlFixture(t, verifyYAML)
	boom := map[string]error{
		"d2/f04.txt": errors.New("d2/f04.txt: permission denied"),
		"d4/f01.txt": errors.New("d4/f01.txt: connection lost"),
	}
	a := f.app(func(st storage.Store) storage.Store { return &countingStore{Store: st, failAt: boom} })
	files := map[string]string{}
	for d := range 6 {
		for i := range 10 {
			files[fmt.Sprintf("d%d/f%02d.txt", d, i)] = "x"
		}
	}
	f.bundle("mine", "mine.one", files)
	if d := f.run(a, "mine"); d.Status != report.StatusOK {
		t.Fatalf("run: %s %v", d.Status, str(d.Error))
	}
	for _, jobs := range []int{1, 8} {
		rep, err := a.Verify(context.Background(), f.cfg, VerifyOptions{
			Root: Root{Pipeline: "mine", Destination: "site"}, Jobs: jobs})
		if err != nil || rep.Error == nil || !strings.Contains(*rep.Error, "d2/f04.txt: permission denied") {
			t.Errorf("--jobs %d: error %v, report error %s; want the read error of d2/f04.txt", jobs, err, str(rep.Error))
		}
	}
}

// progressRecorder records the progress events (App.OnEvent) it was told.
type progressRecorder struct {
	mu       sync.Mutex
	started  map[string][2]int64
	done     map[string]int64
	bytes    int64
	finished []string
}

func (p *progressRecorder) Start(d string, files int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started[d] = [2]int64{int64(files), bytes}
}

func (p *progressRecorder) Done(d, _ string, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done[d]++
	p.bytes += n
}

func (p *progressRecorder) Finish(d string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = append(p.finished, d)
}

func (p *progressRecorder) event(e Event) {
	switch e.Kind {
	case EventStart:
		p.Start(e.Task, e.Files, e.Bytes)
	case EventDone:
		p.Done(e.Task, e.Path, e.Bytes)
	case EventFinish:
		p.Finish(e.Task)
	}
}

// TestVerifyProgress: verify announces the outputs and bytes it will read,
// reports each output checked, and finishes its display.
func TestVerifyProgress(t *testing.T) {
	f := yamlFixture(t, verifyYAML)
	a := f.app(nil)
	files := map[string]string{"a.txt": "aaa", "b/c.txt": "ccccc", "d.txt": ""}
	f.bundle("mine", "mine.one", files)
	if d := f.run(a, "mine"); d.Status != report.StatusOK {
		t.Fatalf("run: %s %v", d.Status, str(d.Error))
	}
	p := &progressRecorder{started: map[string][2]int64{}, done: map[string]int64{}}
	a.OnEvent = p.event
	rep, err := a.Verify(context.Background(), f.cfg, VerifyOptions{Root: Root{Pipeline: "mine", Destination: "site"}, Jobs: 2})
	if err != nil || rep.Failed() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	name := "verify mine -> site"
	if got := p.started[name]; got != [2]int64{3, 8} {
		t.Errorf("started %v, want 3 files, 8 bytes", p.started)
	}
	if p.done[name] != 3 || p.bytes != 8 {
		t.Errorf("done %v (%d bytes), want 3 outputs, 8 bytes", p.done, p.bytes)
	}
	if len(p.finished) != 1 || p.finished[0] != name {
		t.Errorf("finished %v", p.finished)
	}
}
