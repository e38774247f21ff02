package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// A root that is a regular file says so and what to do, not "open root:
// ... not a directory".
func TestRootIsAFileMessage(t *testing.T) {
	root := filepath.Join(t.TempDir(), "www")
	if err := os.WriteFile(root, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(root)
	if err == nil {
		_, err = s.Put(context.Background(), "a", strings.NewReader("a"), 1, storage.PutOptions{})
		s.Close()
	}
	want := "local " + root + ": the configured root is a regular file, not a directory: set the destination's path to a directory (a missing one is created), or move the file out of the way"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// A permission error names the directory, the user and the access missing,
// and still matches fs.ErrPermission. (The tests run as root, whom no
// mode stops, so the failure is made up; cmd/distributor runs the real
// case as nobody.)
func TestPermissionMessage(t *testing.T) {
	s := &Store{path: "/srv/www"}
	denied := &fs.PathError{Op: "openat", Path: ".distributor-tmp-X", Err: syscall.EACCES}
	user := currentUser()
	tests := []struct {
		op, p, want string
	}{
		{"put-if", ".distributor.lock", "local /srv/www: put-if .distributor.lock: permission denied: " + user +
			" lacks write and search (w and x) permission on the directory /srv/www; grant it (chown or chmod) or run distributor as a user that has it"},
		{"put-new", "daily/index.html", "local /srv/www: put-new daily/index.html: permission denied: " + user +
			" lacks write and search (w and x) permission on the directory /srv/www/daily; grant it (chown or chmod) or run distributor as a user that has it"},
		{"get", "a/b", "local /srv/www: get a/b: permission denied: " + user +
			" lacks read and search (r and x) permission on the directory /srv/www/a and what it holds; grant it (chown or chmod) or run distributor as a user that has it"},
	}
	for _, tt := range tests {
		err := s.errorf(tt.op, tt.p, denied)
		if err.Error() != tt.want || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("got  %v\nwant %s", err, tt.want)
		}
	}
	// Anything else is wrapped as before.
	if err := s.errorf("get", "a", errors.New("boom")); err.Error() != "local /srv/www: get a: boom" {
		t.Errorf("got %v", err)
	}
	if want := fmt.Sprintf("uid %d", os.Geteuid()); !strings.Contains(user, want) {
		t.Errorf("currentUser() = %q, want it to hold %q", user, want)
	}
}
