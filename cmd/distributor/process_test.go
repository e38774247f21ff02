package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/txn"
)

// command returns the real distributor entry point as a separate process.
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "DISTRIBUTOR_TEST_AS_MAIN=1", "DISTRIBUTOR_CONFIG=")
	return cmd
}

func writeBundle(t *testing.T, dir, id string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bundle.Seal(context.Background(), dir, id, time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
}

// auditRoot recovers the root as the next writer would (taking a dead run's
// lock over first: takeOverIntent), then checks that
// the catalog is truthful and that every file is recorded (these roots
// hold no unmanaged content). It returns the catalog.
func auditRoot(t *testing.T, root string) *catalog.Catalog {
	t.Helper()
	st, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	takeOverIntent(t, st)
	if _, err := txn.Recover(context.Background(), st, nil, time.Now()); err != nil {
		t.Fatalf("recover: %v", err)
	}
	return auditCatalog(t, st, true)
}

// auditCatalog checks that the catalog of the root st is truthful and
// records every object but the reserved ones, and returns it. With noneOK
// a root without a catalog has an empty one.
func auditCatalog(t *testing.T, st storage.Store, noneOK bool) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	var listed []string // before the catalog is read, as a writer lists
	if err := st.List(ctx, "", func(info storage.Info) error {
		if !info.Dir {
			listed = append(listed, info.Path)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	state, _, err := txn.ReadCatalog(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case state.Status == catalog.StatusNone && noneOK:
		state.Catalog = &catalog.Catalog{}
	case state.Status != catalog.StatusCatalog:
		t.Fatalf("state %s: %v", state.Status, state.Problem)
	}
	c := state.Catalog
	if missing, corrupt := audit(t, st, c); len(missing)+len(corrupt) > 0 {
		t.Fatalf("catalog not truthful: %d missing, %d corrupt (first: %v %v)", len(missing), len(corrupt), first(missing), first(corrupt))
	}
	idx := c.Index()
	for _, p := range listed {
		if !strings.HasPrefix(p, ".distributor") && idx[p] == nil {
			t.Fatalf("orphan %s: in storage, not recorded", p)
		}
	}
	return c
}

// audit re-hashes every output of c from st, one at a time, and returns
// in catalog order the paths of those missing and the records whose
// sha256 or size differ, with what st holds. A read error fails t.
func audit(t *testing.T, st storage.Store, c *catalog.Catalog) (missing, corrupt []string) {
	t.Helper()
	for _, o := range c.Outputs {
		sum, size, err := txn.HashObject(context.Background(), st, o.Path)
		switch {
		case errors.Is(err, storage.ErrNotExist):
			missing = append(missing, o.Path)
		case err != nil:
			t.Fatal(err)
		case sum != o.SHA256 || size != o.Size:
			corrupt = append(corrupt, fmt.Sprintf("%s: %s (%d bytes), recorded %s (%d bytes)", o.Path, sum, size, o.SHA256, o.Size))
		}
	}
	return missing, corrupt
}

func first[T any](s []T) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// TestKillAtRandomMoments starts real runs of a replacement publication
// that alternates between two bundles (creates, overwrites and deletes) and
// kills each with SIGKILL at a random moment. After every kill, recovery
// must leave a truthful catalog and no orphan, and the next run completes.
// DISTRIBUTOR_SOAK=N runs N kills instead of the bounded CI count.
func TestKillAtRandomMoments(t *testing.T) {
	kills := 12
	if n, err := strconv.Atoi(os.Getenv("DISTRIBUTOR_SOAK")); err == nil && n > 0 {
		kills = n
	}
	dir := t.TempDir()
	big := strings.Repeat("x", 8<<10)
	a, b := map[string]string{}, map[string]string{}
	for i := 0; i < 150; i++ {
		a[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = fmt.Sprintf("A %d %s", i, big)
		if i%3 != 0 { // b drops a third, rewrites another third
			v := "A"
			if i%3 == 1 {
				v = "B"
			}
			b[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = fmt.Sprintf("%s %d %s", v, i, big)
		}
	}
	b["new.md"] = "# New\n"
	writeBundle(t, filepath.Join(dir, "a"), "bundle.a", a)
	writeBundle(t, filepath.Join(dir, "b"), "bundle.b", b)
	cfg := filepath.Join(dir, "distributor.yaml")
	conf := "pipelines:\n  - {id: p, source: a, destinations: [site]}\ndestinations:\n  - {id: site, backend: local, path: www, workflow: replacement}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "www")
	rng := rand.New(rand.NewPCG(1, 2)) // deterministic sequence of kill delays
	killed, finished := 0, 0
	for i := 0; i < kills; i++ {
		src := "a"
		if i%2 == 1 {
			src = "b"
		}
		cmd := command(t, "run", "--config", cfg, "--pipeline", "p", "--source", filepath.Join(dir, src), "--lock-timeout", "30s")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.IntN(400)) * time.Millisecond
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d failed on its own: %v", i, err)
			}
			finished++
		case <-time.After(delay):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed++
		}
		auditRoot(t, root)
	}
	// A final run converges to bundle b or a exactly.
	out, err := command(t, "run", "--config", cfg, "--pipeline", "p", "--source", filepath.Join(dir, "b")).CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	c := auditRoot(t, root)
	if len(c.Outputs) != len(b) {
		t.Errorf("final catalog has %d outputs, want %d", len(c.Outputs), len(b))
	}
	t.Logf("%d runs killed at random moments, %d finished first; every state recovered truthful", killed, finished)
}

// localBackend is a local root for the scenarios the remote backends run.
func localBackend(t *testing.T) backend {
	root := filepath.Join(t.TempDir(), "www")
	st, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return backend{store: st, yaml: fmt.Sprintf("    backend: local\n    path: %s\n", root)}
}

// TestConcurrentWriters: 8 processes publish different pipelines into one
// root at the same time, on local disk, SFTP and S3 (the in-process
// servers, and the real ones of scripts/test-servers when they run); every
// output of every run is recorded, none lost.
func TestConcurrentWriters(t *testing.T) {
	all := append([]struct {
		name string
		open func(t *testing.T) backend
	}{{"local", localBackend}}, backends...)
	for _, b := range all {
		t.Run(b.name, func(t *testing.T) {
			be := b.open(t)
			dir := t.TempDir()
			const writers, files = 8, 3
			var conf strings.Builder
			conf.WriteString("pipelines:\n")
			for i := 0; i < writers; i++ {
				fmt.Fprintf(&conf, "  - {id: p%d, source: b%d, destinations: [shared]}\n", i, i)
				fs := map[string]string{}
				for j := 0; j < files; j++ {
					fs[fmt.Sprintf("f%d.txt", j)] = fmt.Sprintf("writer %d file %d", i, j)
				}
				writeBundle(t, filepath.Join(dir, fmt.Sprintf("b%d", i)), fmt.Sprintf("b%d", i), fs)
			}
			conf.WriteString("destinations:\n  - id: shared\n    paths: {prefix: \"{pipeline_id}/\"}\n" + be.yaml)
			cfg := filepath.Join(dir, "distributor.yaml")
			if err := os.WriteFile(cfg, []byte(conf.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, writers)
			outs := make([][]byte, writers)
			for i := 0; i < writers; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					cmd := command(t, "run", "--config", cfg, "--pipeline", fmt.Sprintf("p%d", i), "--lock-timeout", "2m")
					outs[i], errs[i] = cmd.CombinedOutput()
				}(i)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("writer %d: %v\n%s", i, err, outs[i])
				}
			}
			ctx := context.Background()
			state, _, err := txn.ReadCatalog(ctx, be.store)
			if err != nil {
				t.Fatal(err)
			}
			if state.Status != catalog.StatusCatalog {
				t.Fatalf("state %s: %v", state.Status, state.Problem)
			}
			c := state.Catalog
			if len(c.Outputs) != writers*files {
				t.Fatalf("%d records, want %d: a catalog update was lost", len(c.Outputs), writers*files)
			}
			if missing, corrupt := audit(t, be.store, c); len(missing)+len(corrupt) > 0 {
				t.Fatalf("catalog not truthful: missing %v, corrupt %v", missing, corrupt)
			}
			t.Logf("%s: %d concurrent writer processes, %d records kept", b.name, writers, len(c.Outputs))
		})
	}
}

// TestKillPruneAtRandomMoments kills `prune --apply` with SIGKILL at random
// moments while it deletes: after each kill, recovery must leave a truthful
// catalog and no orphan, and a final prune completes the policy: of the
// publications (4 of 100 files per round) only the keep_min newest stays.
func TestKillPruneAtRandomMoments(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "distributor.yaml")
	conf := "pipelines:\n  - {id: p, source: a, destinations: [site]}\ndestinations:\n" +
		"  - {id: site, backend: local, path: www, paths: {prefix: \"{source_id}/\"}, retention: {prune: {older_than: 1s, keep_min: 1}}}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "www")
	rng := rand.New(rand.NewPCG(3, 4))
	killed, finished := 0, 0
	for round := 0; round < 2; round++ {
		for pub := 0; pub < 4; pub++ {
			fs := map[string]string{}
			for i := 0; i < 100; i++ {
				fs[fmt.Sprintf("d%d/f%03d.txt", i%5, i)] = fmt.Sprintf("round %d publication %d file %d", round, pub, i)
			}
			src := filepath.Join(dir, fmt.Sprintf("r%dp%d", round, pub))
			writeBundle(t, src, fmt.Sprintf("round%d.pub%d", round, pub), fs)
			if _, err := bundle.Seal(context.Background(), src, fmt.Sprintf("round%d.pub%d", round, pub), time.Date(2026, 6, 19, round, pub, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			if out, err := command(t, "run", "--config", cfg, "--pipeline", "p", "--source", src).CombinedOutput(); err != nil {
				t.Fatalf("publish: %v\n%s", err, out)
			}
		}
		time.Sleep(1100 * time.Millisecond) // everything is now older than 1s
		for i := 0; i < 5; i++ {
			cmd := command(t, "prune", "--config", cfg, "--pipeline", "p", "--destination", "site", "--apply", "--lock-timeout", "30s")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("prune failed on its own: %v", err)
				}
				finished++
			case <-time.After(time.Duration(5+rng.IntN(40)) * time.Millisecond):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				killed++
			}
			auditRoot(t, root)
		}
	}
	out, err := command(t, "prune", "--config", cfg, "--pipeline", "p", "--destination", "site", "--apply").CombinedOutput()
	if err != nil {
		t.Fatalf("final prune: %v\n%s", err, out)
	}
	c := auditRoot(t, root)
	if len(c.Outputs) != 100 || c.Outputs[0].Source.ID != "round1.pub3" {
		t.Errorf("%d outputs after the final prune, want the 100 of publication round1.pub3 (keep_min 1)", len(c.Outputs))
	}
	t.Logf("prune --apply killed %d times at random moments (%d finished first); every state recovered truthful", killed, finished)
}
