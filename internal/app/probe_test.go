package app

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestServerIgnoringConditionsIsRefused: an S3 server that accepts
// conditional writes but ignores the conditions (here: gofakes3 behind a
// gateway that drops If-None-Match and If-Match) is refused before anything
// is written; with single_writer: true the operator takes that risk, and
// every run warns.
func TestServerIgnoringConditionsIsRefused(t *testing.T) {
	st := s3test.Start(t, s3test.TLS(), s3test.Middleware(s3test.DropHeaders("If-None-Match", "If-Match"))).Open(t, "site")
	unprovenServerScenario(t,
		func(context.Context) (storage.Store, error) { return keepOpen{st}, nil },
		func() []string { return slices.Collect(maps.Keys(storagetest.Snapshot(t, st))) })
}

// TestSFTPServerIgnoringExclusiveIsRefused: an SFTP server that announces
// hardlink@openssh.com but answers it "operation unsupported", and that
// ignores O_EXCL (as rclone serve sftp was seen to), is refused before
// anything is written: the adapter falls back to O_EXCL, which the probe
// then finds unenforced. With single_writer: true the run publishes, and
// warns.
func TestSFTPServerIgnoringExclusiveIsRefused(t *testing.T) {
	srv := sftptest.Start(t, sftptest.WithQuirks(sftptest.Quirks{HardlinkUnsupported: true, IgnoreExclusive: true}))
	opts := sftpOptions(srv.Login())
	unprovenServerScenario(t,
		func(ctx context.Context) (storage.Store, error) { return sftp.New(ctx, opts) },
		func() []string { return rootEntries(t, opts.Root) }) // directories too
}

// unprovenServerScenario runs a publish through open (which replaces the
// configured local root) twice: without single_writer it must be refused
// naming the missing capability and the opt-in, with nothing left at the
// root (left lists what is there); with single_writer: true it must
// publish, and warn.
func unprovenServerScenario(t *testing.T, open func(context.Context) (storage.Store, error), left func() []string) {
	t.Helper()
	files := map[string]string{"a.txt": "a", "b/c.txt": "c"}
	for _, single := range []bool{false, true} {
		yaml := "pipelines:\n  - {id: mine, source: mine, destinations: [site]}\ndestinations:\n  - {id: site, backend: local, path: www"
		if single {
			yaml += ", single_writer: true"
		}
		f := yamlFixture(t, yaml+"}\n")
		f.bundle("mine", "mine.one", files)
		var logs bytes.Buffer
		a := New("test", slog.New(slog.NewTextHandler(&logs, nil)))
		a.Open = func(ctx context.Context, _ *config.Destination, _ string) (storage.Store, error) { return open(ctx) }
		d := f.run(a, "mine")
		if !single {
			msg := str(d.Error)
			if d.Status == report.StatusOK || !strings.Contains(msg, "does not enforce exclusive create") || !strings.Contains(msg, "single_writer") {
				t.Fatalf("run against a server that ignores conditions: %s %s", d.Status, msg)
			}
			if got := left(); len(got) != 0 {
				t.Fatalf("refused run left %q at the root", got)
			}
			continue
		}
		if d.Status != report.StatusOK {
			t.Fatalf("single_writer run: %s %s", d.Status, str(d.Error))
		}
		if !strings.Contains(logs.String(), "does not enforce conditional writes") {
			t.Errorf("no warning on a single_writer run against an unproven server: %s", logs.String())
		}
		st, err := open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range files {
			if got, _, err := st.Get(context.Background(), p); err != nil || string(got) != want {
				t.Errorf("%s = %q, %v; want %q", p, got, err, want)
			}
		}
		st.Close()
	}
}

// rootEntries returns every entry below root (directories too), relative;
// none if root does not exist.
func rootEntries(t *testing.T, root string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return filepath.SkipDir
		}
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		got = append(got, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
