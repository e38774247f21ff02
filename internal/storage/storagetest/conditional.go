// The conformance tests of conditional writes.

package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

func testPutIfCreate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v1, err := storage.PutIf(ctx, s, "lock", []byte("one"), "")
	if err != nil {
		t.Fatalf("PutIf create: %v", err)
	}
	if v1 == "" {
		t.Fatal("PutIf returned the zero Version")
	}
	if _, err := storage.PutIf(ctx, s, "lock", []byte("two"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("second PutIf create: got %v, want ErrPrecondition", err)
	}
	data, v := get(t, s, "lock")
	if string(data) != "one" || v != v1 {
		t.Errorf("Get = %q, %q; want %q, %q", data, v, "one", v1)
	}
	// Nested, with parents to create.
	if _, err := storage.PutIf(ctx, s, "x/y/lock", []byte("nested"), ""); err != nil {
		t.Fatalf("PutIf nested create: %v", err)
	}
	wantContent(t, s, "x/y/lock", "nested")
	// An object written by Put counts as present.
	put(t, s, "plain", "p")
	if _, err := storage.PutIf(ctx, s, "plain", []byte("q"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf create over a Put object: got %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "plain", "p")
	// After Delete the name can be created again.
	if err := s.Delete(ctx, "lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(ctx, s, "lock", []byte("three"), ""); err != nil {
		t.Fatalf("PutIf create after Delete: %v", err)
	}
	wantContent(t, s, "lock", "three")
	wantList(t, s, "", "lock", "plain", "x/y/lock")
}

func testPutIfVersion(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v1, err := storage.PutIf(ctx, s, "state", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := storage.PutIf(ctx, s, "state", []byte("two"), v1)
	if err != nil {
		t.Fatalf("PutIf with the current version: %v", err)
	}
	if v2 == v1 || v2 == "" {
		t.Errorf("new version %q, old %q: want a different, non-zero version", v2, v1)
	}
	if _, err := storage.PutIf(ctx, s, "state", []byte("three"), v1); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf with a stale version: got %v, want ErrPrecondition", err)
	}
	data, v := get(t, s, "state")
	if string(data) != "two" || v != v2 {
		t.Errorf("Get = %q, %q; want %q, %q", data, v, "two", v2)
	}
	if _, err := storage.PutIf(ctx, s, "state", []byte("four"), v2); err != nil {
		t.Fatalf("PutIf with the current version: %v", err)
	}
	wantContent(t, s, "state", "four")
	// A non-zero version never matches an absent object.
	if _, err := storage.PutIf(ctx, s, "absent", []byte("x"), v1); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf(version) of an absent object: got %v, want ErrPrecondition", err)
	}
	if _, err := storage.PutIf(ctx, s, "absent/nested", []byte("x"), v1); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf(version) of an absent object: got %v, want ErrPrecondition", err)
	}
	wantMissing(t, s, "absent")
	wantList(t, s, "", "state")
}

func testPutIfAfterPut(t *testing.T, s storage.Store) {
	ctx := t.Context()
	put(t, s, "obj", "by put")
	_, v := get(t, s, "obj")
	v2, err := storage.PutIf(ctx, s, "obj", []byte("by put-if"), v)
	if err != nil {
		t.Fatalf("PutIf with the version Get returned: %v", err)
	}
	data, v3 := get(t, s, "obj")
	if string(data) != "by put-if" || v3 != v2 {
		t.Errorf("Get = %q, %q; want %q, %q", data, v3, "by put-if", v2)
	}
	// A Put in between makes the version stale.
	put(t, s, "obj", "by put again")
	if _, err := storage.PutIf(ctx, s, "obj", []byte("lost"), v2); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf after an intervening Put: got %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "obj", "by put again")
}

func testPutIfCreateRace(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const n = 8
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		errs     [n]error
		versions [n]storage.Version
	)
	for i := range n {
		wg.Go(func() {
			<-start
			versions[i], errs[i] = storage.PutIf(ctx, s, "race/lock", fmt.Appendf(nil, "holder %d", i), "")
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("goroutines %d and %d both created the object", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, storage.ErrPrecondition):
			t.Errorf("goroutine %d: got %v, want nil or ErrPrecondition", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no goroutine created the object")
	}
	data, v := get(t, s, "race/lock")
	if want := fmt.Sprintf("holder %d", winner); string(data) != want || v != versions[winner] {
		t.Errorf("Get = %q, %q; want the winner's %q, %q", data, v, want, versions[winner])
	}
	wantList(t, s, "", "race/lock")
}

// invalidPaths are rejected by every method with storage.ErrInvalidPath.
var invalidPaths = []string{
	"", "/", "/abs", "trailing/", "..", ".", "../up", "a/../b", "a/./b", "./a",
	"a/..", "a//b", `back\slash`, "nul\x00byte", "new\nline", "tab\tchar", "\xff\xfe",
}

// invalidPrefixes are List prefixes whose directory part is not clean.
var invalidPrefixes = []string{"/", "/a", "../", "../a", "a//", "a//b", "./a", "a/../", `a\b`, "a\x00"}
