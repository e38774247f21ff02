package sftp

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestSymlinkedParentNeverFollowed: a directory inside the root replaced by
// a symbolic link to a directory outside it, holding files of the same
// names. Nothing below the link is read, written or deleted, as on the
// local backend.
func TestSymlinkedParentNeverFollowed(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		root := opts.Root
		outside := linkParentsOutside(t, opts)
		before := storagetest.DirSnapshot(t, outside)
		s := open(t, opts) // a new process: it never saw d0 or d1 as directories
		linkedParentsRefused(t, s)
		linksUnfollowed(t, s)
		if after := storagetest.DirSnapshot(t, outside); !maps.Equal(before, after) {
			t.Errorf("the directory outside the root changed:\nbefore %q\n after %q", before, after)
		}
		for _, d := range []string{"d0", "d1"} {
			if fi, err := os.Lstat(filepath.Join(root, d)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s is no longer the link: %v, %v", d, fi, err)
			}
		}
		belowFileRefused(t, s)
	})
}

// linkParentsOutside writes files of the same names outside the root and
// inside it (d0, d1 and file, through a store), then replaces d0 and d1
// by symbolic links to outside (absolute and relative), and returns outside.
func linkParentsOutside(t *testing.T, opts Options) string {
	root, outside := opts.Root, t.TempDir()
	for name, data := range map[string]string{
		"x": "outside x", "sub/y": "outside y", "lock": "outside lock",
		storage.TempPrefix + "not-ours": "not ours", "sub/" + storage.TempPrefix + "not-ours": "not ours",
	} {
		storagetest.WriteFile(t, filepath.Join(outside, name), data)
	}
	// The directories first exist, written through a store...
	first := open(t, opts)
	for _, p := range []string{"d0/x", "d0/sub/y", "d0/lock", "d1/x", "file"} {
		put(t, first, p, "inside "+p)
	}
	first.Close()
	// ...then someone replaces them by links out of the root.
	for _, d := range []string{"d0", "d1"} {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "d0")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, outside)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(root, "d1")); err != nil {
		t.Fatal(err)
	}
	return outside
}

// linkedParentsRefused: below d0 and d1, Delete leaves everything alone,
// writers refuse the path as a symbolic link, readers find nothing.
func linkedParentsRefused(t *testing.T, s *Store) {
	ctx := t.Context()
	for _, p := range []string{"d0/x", "d0/sub/y", "d0/lock", "d0/new", "d0/sub/new/deep", "d1/x", "d1/sub/y"} {
		dir, _, _ := strings.Cut(p, "/")
		if err := s.Delete(ctx, p); err != nil {
			t.Errorf("Delete(%q): %v", p, err)
		}
		wantRefused := func(method string, err error) {
			t.Helper()
			if !errors.Is(err, storage.ErrInvalidPath) || !strings.Contains(err.Error(), dir+" is a symbolic link (never followed)") {
				t.Errorf("%s(%q): got %v, want ErrInvalidPath: %s is a symbolic link (never followed)", method, p, err, dir)
			}
		}
		_, err := s.Put(ctx, p, strings.NewReader("pwned"), 5, storage.PutOptions{})
		wantRefused("Put", err)
		_, err = storage.PutIf(ctx, s, p, []byte("pwned"), "")
		wantRefused("PutIf(create)", err)
		if _, err := storage.PutIf(ctx, s, p, []byte("pwned"), dirstore.ContentVersion([]byte("outside x"))); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("PutIf(%q, version): got %v, want ErrPrecondition (absent)", p, err)
		}
		wantMissing := func(method string, err error) {
			t.Helper()
			if !errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrInvalidPath) {
				t.Errorf("%s(%q): got %v, want ErrNotExist", method, p, err)
			}
		}
		_, _, err = s.Get(ctx, p)
		wantMissing("Get", err)
		_, err = s.Stat(ctx, p)
		wantMissing("Stat", err)
		r, err := s.Open(ctx, p)
		if err == nil {
			r.Close()
		}
		wantMissing("Open", err)
	}
}

// linksUnfollowed: SweepTemp finds nothing below the links, List reports
// the links themselves.
func linksUnfollowed(t *testing.T, s *Store) {
	ctx := t.Context()
	for _, o := range []storage.SweepOptions{
		{},
		{DryRun: true},
		{Dirs: []string{"d0", "d0/sub", "d1", "d1/sub"}},
		{Dirs: []string{"d0", "d0/sub"}, DryRun: true},
	} {
		if found, err := s.SweepTemp(ctx, o); len(found) != 0 || err != nil {
			t.Errorf("SweepTemp(%+v) = %q, %v; want nothing", o, found, err)
		}
	}
	if got := list(t, s, ""); !slices.Equal(got, []string{"d0/", "d1/", "file"}) { // the links, not followed
		t.Errorf("List = %q", got)
	}
}

// belowFileRefused: below a regular file, paths are missing for readers,
// left alone by Delete, refused by writers (not as an invalid path).
func belowFileRefused(t *testing.T, s *Store) {
	ctx := t.Context()
	if err := s.Delete(ctx, "file/x"); err != nil {
		t.Errorf("Delete(file/x): %v", err)
	}
	if _, _, err := s.Get(ctx, "file/x"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Get(file/x): got %v, want ErrNotExist", err)
	}
	_, err := s.Put(ctx, "file/x", strings.NewReader("x"), 1, storage.PutOptions{})
	if err == nil || errors.Is(err, storage.ErrInvalidPath) || !strings.Contains(err.Error(), "file is not a directory") {
		t.Errorf("Put(file/x): got %v, want file is not a directory", err)
	}
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{Dirs: []string{"file"}}); len(found) != 0 || err != nil {
		t.Errorf("SweepTemp(file) = %q, %v", found, err)
	}
	if data, _, err := s.Get(ctx, "file"); err != nil || string(data) != "inside file" {
		t.Errorf("Get(file) = %q, %v", data, err)
	}
}

// dropReader yields size zero bytes; once it has yielded after bytes it
// calls drop (once) and carries on.
type dropReader struct {
	size, after int
	drop        func()
	done        bool
}

func (r *dropReader) Read(p []byte) (int, error) {
	if r.size == 0 {
		return 0, io.EOF
	}
	if r.after <= 0 && !r.done {
		r.done = true
		r.drop()
	}
	n := min(len(p), r.size)
	clear(p[:n])
	r.size -= n
	r.after -= n
	return n, nil
}

// TestFailedPutRemovesTempFileOnFreshConnection: a Put that fails because
// its connection died removes its temporary file (and the directories it
// made) over a new connection.
func TestFailedPutRemovesTempFileOnFreshConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop func(srv *testServer, c *conn)
	}{
		{"client closes", func(_ *testServer, c *conn) { c.close() }},
		{"server drops, noticed", func(srv *testServer, c *conn) {
			srv.dropConnections()
			for deadline := time.Now().Add(5 * time.Second); !c.dead.Load() && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		}},
		{"server drops", func(srv *testServer, _ *conn) { srv.dropConnections() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t)
			s := open(t, srv.options())
			put(t, s, "keep", "keep")
			s.mu.Lock()
			c := s.conn
			s.mu.Unlock()
			r := &dropReader{size: 8 << 20, after: 1 << 20, drop: func() { tc.drop(srv, c) }}
			if _, err := s.Put(t.Context(), "new/dir/big", r, 8<<20, storage.PutOptions{}); err == nil {
				t.Fatal("Put over a dead connection succeeded")
			}
			if !r.done {
				t.Fatal("the connection was not dropped")
			}
			if left := storagetest.DirEntries(t, srv.root); !slices.Equal(left, []string{"keep"}) {
				t.Errorf("left on the server: %q, want only keep", left)
			}
			put(t, s, "new/dir/after", "x")
		})
	}
}
