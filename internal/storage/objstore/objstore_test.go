package objstore

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// fake is a Client over listed keys and uploads; it records its requests.
type fake struct {
	keys     []string // in the server's order
	more     bool     // what a bounded List says of further keys
	uploads  []Upload
	requests []string
}

func (f *fake) List(_ context.Context, prefix string, max int, fn func(Object)) (bool, error) {
	f.requests = append(f.requests, "list "+prefix)
	n := 0
	for _, k := range f.keys {
		if strings.HasPrefix(k, prefix) && (max == 0 || n < max) {
			fn(Object{Key: k, Version: "v"})
			n++
		}
	}
	return max > 0 && f.more, nil
}

func (f *fake) Open(context.Context, string) (io.ReadCloser, storage.Version, error) {
	return nil, "", errors.ErrUnsupported
}
func (f *fake) Head(context.Context, string) (Object, error) { return Object{}, errors.ErrUnsupported }
func (f *fake) Put(context.Context, string, Write) (storage.Version, error) {
	return "", errors.ErrUnsupported
}
func (f *fake) Delete(context.Context, string) error { return errors.ErrUnsupported }

func (f *fake) Uploads(_ context.Context, prefix string) ([]Upload, error) {
	f.requests = append(f.requests, "uploads "+prefix)
	var ups []Upload
	for _, u := range f.uploads {
		if strings.HasPrefix(u.Key, prefix) {
			ups = append(ups, u)
		}
	}
	return ups, nil
}

func (f *fake) Abort(_ context.Context, u Upload) error {
	f.requests = append(f.requests, "abort "+u.Key+" "+u.ID)
	return nil
}

func paths(infos []storage.Info) []string {
	var ps []string
	for _, i := range infos {
		ps = append(ps, i.Path)
	}
	return ps
}

// TestList: a listing loses the keys outside the root, directory markers
// and temporary objects, comes sorted, and is refused when it names a key
// twice.
func TestList(t *testing.T) {
	f := &fake{keys: []string{"root/b", "root/a/", "root/a/x", "root/" + storage.TempPrefix + "1", "rootless", "root/a"}}
	s := New(f, Config{URL: "x://b", Prefix: "root/", MaxPage: 9})
	var got []storage.Info
	if err := s.List(t.Context(), "", func(i storage.Info) error { got = append(got, i); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "a/x", "b"}; !slices.Equal(paths(got), want) || !slices.Equal(f.requests, []string{"list root/"}) {
		t.Errorf("List: %q after %q; want %q after one listing", paths(got), f.requests, want)
	}
	f.keys = append(f.keys, "root/b")
	if err := s.List(t.Context(), "", func(storage.Info) error { return nil }); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("List of a key listed twice: %v", err)
	}
}

// TestListPage: a page asks for one key more than max; it is complete only
// when the server has no more and sent at most max keys, skipped ones
// counted.
func TestListPage(t *testing.T) {
	for _, tc := range []struct {
		keys     []string
		more     bool
		want     []string
		complete bool
	}{
		{[]string{"b", "a"}, false, []string{"a", "b"}, true},
		{[]string{"a", "b", "c"}, false, []string{"a", "b"}, false},
		{[]string{"a", storage.TempPrefix + "x", "c"}, false, []string{"a"}, false},
		{[]string{"a"}, true, []string{"a"}, false},
	} {
		f := &fake{keys: tc.keys, more: tc.more}
		s := New(f, Config{URL: "x://b", MaxPage: 999})
		got, complete, err := s.ListPage(t.Context(), "", 2)
		if err != nil || !slices.Equal(paths(got), tc.want) || complete != tc.complete {
			t.Errorf("ListPage(2) of %q (more %v): %q, %v, %v; want %q, %v", tc.keys, tc.more, paths(got), complete, err, tc.want, tc.complete)
		}
	}
	if _, _, err := New(&fake{}, Config{URL: "x://b", MaxPage: 999}).ListPage(t.Context(), "", 1000); err == nil {
		t.Error("ListPage(1000) beyond MaxPage 999: no error")
	}
}

// TestSweep: the uploads of the directories asked for (not below them) are
// aborted in path order, each reported; a dry run aborts none.
func TestSweep(t *testing.T) {
	// A directory marker and a temporary name are not the sweep's: the same
	// rule as List, for every object store.
	ups := []Upload{{Key: "r/d/b", ID: "2"}, {Key: "r/d/a", ID: "1"}, {Key: "r/d/e/c", ID: "3"}, {Key: "r/x", ID: "4"},
		{Key: "r/d/", ID: "5"}, {Key: "r/d/" + storage.TempPrefix + "t", ID: "6"}}
	for _, dry := range []bool{false, true} {
		f := &fake{uploads: ups}
		s := New(f, Config{URL: "x://b", Prefix: "r"})
		var heard []string
		found, err := s.SweepTemp(t.Context(), storage.SweepOptions{Dirs: []string{"d"}, DryRun: dry,
			Found: func(i storage.Info) { heard = append(heard, i.Path) }})
		want := []string{"uploads r/d/", "abort r/d/a 1", "abort r/d/b 2"}
		if dry {
			want = want[:1]
		}
		if err != nil || !slices.Equal(found, []string{"d/a", "d/b"}) || !slices.Equal(heard, found) || !slices.Equal(f.requests, want) {
			t.Errorf("sweep (dry run %v): %q, heard %q, %v after %q; want d/a, d/b after %q", dry, found, heard, err, f.requests, want)
		}
	}
}
