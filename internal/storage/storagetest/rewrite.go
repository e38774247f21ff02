package storagetest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// rewriteTests check RewriteIf, for stores with Properties.Rewrite.
var rewriteTests = []struct {
	name string
	fn   func(t *testing.T, s storage.Store)
}{
	{"RewriteIfReplaces", testRewriteIfReplaces},
	{"RewriteIfStaleVersion", testRewriteIfStaleVersion},
	{"RewriteIfFnError", testRewriteIfFnError},
	{"RewriteIfLarge", testRewriteIfLarge},
}

// upper is a rewrite: the current bytes upper-cased.
func upper(cur io.Reader, w io.Writer) error {
	b, err := io.ReadAll(cur)
	if err != nil {
		return err
	}
	_, err = w.Write(bytes.ToUpper(b))
	return err
}

// testRewriteIfReplaces: the replacement takes the object's place, with the
// Version Get then reports; no temporary object is left.
func testRewriteIfReplaces(t *testing.T, s storage.Store) {
	v1 := putIfStream(t, s, "d/state", []byte("one"), "")
	if err := s.RewriteIf(t.Context(), "d/state", v1, upper); err != nil {
		t.Fatal(err)
	}
	data, v := get(t, s, "d/state")
	if string(data) != "ONE" || v == v1 {
		t.Errorf("Get = %q, %q; want %q, not %q", data, v, "ONE", v1)
	}
	// A rewrite from the new version works: the Version Get gives is
	// the one a compare-and-swap checks.
	if err := s.RewriteIf(t.Context(), "d/state", v, func(cur io.Reader, w io.Writer) error {
		_, err := io.Copy(w, io.MultiReader(cur, bytes.NewReader([]byte("!"))))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, "d/state", "ONE!")
	wantList(t, s, "", "d/state")
	if temps, err := s.SweepTemp(t.Context(), storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary objects after RewriteIf: %v %v", temps, err)
	}
}

// testRewriteIfStaleVersion: a stale Version, or an absent object, fails
// with ErrPrecondition after fn ran, and changes nothing; fn may stop
// reading early and the Version still covers the whole object.
func testRewriteIfStaleVersion(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v1 := putIfStream(t, s, "state", []byte("two"), "")
	putIfStream(t, s, "state", []byte("two, longer"), v1)
	partial := func(cur io.Reader, w io.Writer) error {
		var b [3]byte
		_, err := io.ReadFull(cur, b[:]) // "two": all of v1's object
		w.Write([]byte("lost"))
		return err
	}
	if err := s.RewriteIf(ctx, "state", v1, partial); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("stale Version: %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "state", "two, longer")
	if err := s.RewriteIf(ctx, "absent", v1, upper); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("absent object: %v, want ErrPrecondition", err)
	}
	wantMissing(t, s, "absent")
	wantList(t, s, "", "state")
	if temps, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary objects after failed rewrites: %v %v", temps, err)
	}
}

// testRewriteIfFnError: fn's error comes back as is and the object stays.
func testRewriteIfFnError(t *testing.T, s storage.Store) {
	v := putIfStream(t, s, "state", []byte("one"), "")
	boom := errors.New("boom")
	err := s.RewriteIf(t.Context(), "state", v, func(cur io.Reader, w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if err != boom {
		t.Fatalf("err %v, want fn's error as is", err)
	}
	wantContent(t, s, "state", "one")
	wantList(t, s, "", "state")
}

// testRewriteIfLarge: an object of several MB is rewritten in a stream.
func testRewriteIfLarge(t *testing.T, s storage.Store) {
	big := payload(5<<20, 21)
	v := putIfStream(t, s, "big", big, "")
	if err := s.RewriteIf(t.Context(), "big", v, func(cur io.Reader, w io.Writer) error {
		_, err := io.Copy(w, io.MultiReader(cur, bytes.NewReader([]byte("tail"))))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if data, _ := get(t, s, "big"); !bytes.Equal(data, append(big, "tail"...)) {
		t.Errorf("rewritten object differs (%d bytes, want %d)", len(data), len(big)+4)
	}
}

// testUnsupported: a method that the store's Properties rule out fails
// with an error matching errors.ErrUnsupported (Stage: ErrNoStaging too),
// and changes nothing.
func testUnsupported(t *testing.T, s storage.Store) {
	ctx := t.Context()
	p := s.Properties()
	putIfStream(t, s, "state", []byte("one"), "")
	if !p.Rewrite {
		called := false
		err := s.RewriteIf(ctx, "state", "", func(io.Reader, io.Writer) error { called = true; return nil })
		if !errors.Is(err, errors.ErrUnsupported) || called {
			t.Errorf("RewriteIf without Properties.Rewrite = %v (fn called: %v), want errors.ErrUnsupported", err, called)
		}
	}
	if !p.ListPages {
		if _, _, err := s.ListPage(ctx, "", 10); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("ListPage without Properties.ListPages = %v, want errors.ErrUnsupported", err)
		}
	}
	if !p.CreatesRoot {
		if gone, err := s.RemoveCreatedRoot(ctx); gone || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("RemoveCreatedRoot without Properties.CreatesRoot = %v, %v, want errors.ErrUnsupported", gone, err)
		}
	}
	if !p.Stage {
		_, err := s.Stage(ctx, "staged", bytes.NewReader([]byte("x")), 1, storage.PutOptions{})
		if !errors.Is(err, storage.ErrNoStaging) || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Stage without Properties.Stage = %v, want storage.ErrNoStaging and errors.ErrUnsupported", err)
		}
	}
	if data, _ := get(t, s, "state"); string(data) != "one" {
		t.Errorf("state = %q after the unsupported calls, want %q", data, "one")
	}
}
