package storagetest

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// sweepTests cover Sync and SweepTemp. Those with needsPlant run only when
// the adapter can plant temporary objects (WithPlantTemp).
var sweepTests = []struct {
	name       string
	needsPlant bool
	fn         func(t *testing.T, s storage.Store, plant PlantTemp)
}{
	{"Sync", false, testSync},
	{"SweepTempNothing", false, testSweepTempNothing},
	{"SweepTempInvalidDirs", false, testSweepTempInvalidDirs},
	{"SweepTemp", true, testSweepTemp},
	{"SweepTempDryRun", true, testSweepTempDryRun},
	{"SweepTempDirs", true, testSweepTempDirs},
}

func testSync(t *testing.T, s storage.Store, _ PlantTemp) {
	ctx := t.Context()
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("Sync of a fresh store: %v", err)
	}
	put(t, s, "a", "a")
	put(t, s, "b/c", "c")
	put(t, s, "d/e/f", "f")
	put(t, s, "a", "a again")
	if _, err := storage.PutIf(ctx, s, "g/lock", []byte("lock"), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("Sync after Puts: %v", err)
	}
	wantContent(t, s, "a", "a again")
	wantContent(t, s, "d/e/f", "f")
	if err := s.Delete(ctx, "b/c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("Sync after a Delete: %v", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("second Sync: %v", err)
	}
	wantList(t, s, "", "a", "d/e/f", "g/lock")
}

// sweepOptions are SweepTemp scopes to try on a store that holds no
// temporary object.
var sweepOptions = []storage.SweepOptions{
	{},
	{DryRun: true},
	{Dirs: []string{}},
	{Dirs: []string{""}},
	{Dirs: []string{"a", "a/b", "missing", "missing/deeper", "z"}, DryRun: true},
	{Dirs: []string{"", "a", "a/b", "missing", "z"}},
}

// sweep calls SweepTemp and fails the test on an error.
func sweep(t *testing.T, s storage.Store, opts storage.SweepOptions) []string {
	t.Helper()
	found, err := s.SweepTemp(t.Context(), opts)
	if err != nil {
		t.Fatalf("SweepTemp(%+v): %v", opts, err)
	}
	return found
}

// wantSweep checks that SweepTemp(opts) reports exactly want (in any order
// given; the store must report it sorted), and tells opts.Found of the
// same paths.
func wantSweep(t *testing.T, s storage.Store, opts storage.SweepOptions, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var heard []string
	opts.Found = func(i storage.Info) { heard = append(heard, i.Path) }
	if got := sweep(t, s, opts); !slices.Equal(got, want) {
		t.Errorf("SweepTemp(%+v):\n got %q\nwant %q", opts, got, want)
	}
	if slices.Sort(heard); !slices.Equal(heard, want) {
		t.Errorf("SweepTemp(%+v) told Found of %q, want %q", opts, heard, want)
	}
}

// contents maps every object the store lists to its content.
func contents(t *testing.T, s storage.Store) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, p := range list(t, s, "") {
		data, _ := get(t, s, p)
		m[p] = string(data)
	}
	return m
}

func testSweepTempNothing(t *testing.T, s storage.Store, _ PlantTemp) {
	// A fresh store (whose root may not even exist).
	for _, opts := range sweepOptions {
		wantSweep(t, s, opts)
	}
	wantList(t, s, "")
	// Objects are not temporary.
	for _, p := range []string{"a/x", "a/b/y", "z", "z2/w"} {
		put(t, s, p, "content of "+p)
	}
	before := contents(t, s)
	for _, opts := range sweepOptions {
		wantSweep(t, s, opts)
	}
	if after := contents(t, s); !maps.Equal(before, after) {
		t.Errorf("SweepTemp changed the objects:\nbefore %q\n after %q", before, after)
	}
}

func testSweepTempInvalidDirs(t *testing.T, s storage.Store, _ PlantTemp) {
	put(t, s, "a/x", "x")
	for _, dir := range []string{"/", "/a", "a/", "..", "a/..", "./a", "a//x", `a\x`, "a\x00", storage.TempPrefix + "x"} {
		for _, dryRun := range []bool{false, true} {
			_, err := s.SweepTemp(t.Context(), storage.SweepOptions{Dirs: []string{"a", dir}, DryRun: dryRun})
			if !errors.Is(err, storage.ErrInvalidPath) {
				t.Errorf("SweepTemp(Dirs %q, DryRun %v): got %v, want ErrInvalidPath", dir, dryRun, err)
			}
		}
	}
	wantContent(t, s, "a/x", "x")
}

func testSweepTemp(t *testing.T, s storage.Store, plant PlantTemp) {
	put(t, s, "keep", "keep")
	put(t, s, "d/keep", "d/keep")
	temps := []string{plant(t, s, ""), plant(t, s, "d"), plant(t, s, "d/e"), plant(t, s, "d/e"), plant(t, s, "x/y/z")}
	wantList(t, s, "", "d/keep", "keep") // temporary objects are never listed
	wantSweep(t, s, storage.SweepOptions{}, temps...)
	wantSweep(t, s, storage.SweepOptions{})
	wantSweep(t, s, storage.SweepOptions{DryRun: true})
	wantList(t, s, "", "d/keep", "keep")
	wantContent(t, s, "keep", "keep")
	wantContent(t, s, "d/keep", "d/keep")
	// Where a sweep removed temporary objects (and maybe directories),
	// writing works as before.
	put(t, s, "d/e/new", "new")
	put(t, s, "x/y/z/new", "new")
	if _, err := storage.PutIf(t.Context(), s, "x/y/lock", []byte("lock"), ""); err != nil {
		t.Errorf("PutIf after a sweep: %v", err)
	}
	wantList(t, s, "", "d/e/new", "d/keep", "keep", "x/y/lock", "x/y/z/new")
}

func testSweepTempDryRun(t *testing.T, s storage.Store, plant PlantTemp) {
	put(t, s, "keep", "keep")
	put(t, s, "d/keep", "d/keep")
	root, d, de := plant(t, s, ""), plant(t, s, "d"), plant(t, s, "d/e")
	before := contents(t, s)
	for range 2 { // a dry run removes nothing: the second sees the same
		wantSweep(t, s, storage.SweepOptions{DryRun: true}, root, d, de)
		wantSweep(t, s, storage.SweepOptions{DryRun: true, Dirs: []string{"d"}}, d)
		wantSweep(t, s, storage.SweepOptions{DryRun: true, Dirs: []string{"d/e", ""}}, root, de)
	}
	if after := contents(t, s); !maps.Equal(before, after) {
		t.Errorf("a dry run changed the objects:\nbefore %q\n after %q", before, after)
	}
	wantSweep(t, s, storage.SweepOptions{}, root, d, de)
	wantSweep(t, s, storage.SweepOptions{DryRun: true})
}

func testSweepTempDirs(t *testing.T, s storage.Store, plant PlantTemp) {
	put(t, s, "a/obj", "a")
	put(t, s, "c/obj", "c")
	root, a, ab, c := plant(t, s, ""), plant(t, s, "a"), plant(t, s, "a/b"), plant(t, s, "c")
	a2 := plant(t, s, "a")
	before := contents(t, s)
	// Not recursive: a/b is not below a for this purpose.
	wantSweep(t, s, storage.SweepOptions{Dirs: []string{"a"}}, a, a2)
	wantSweep(t, s, storage.SweepOptions{DryRun: true}, root, ab, c)
	// Missing directories, and objects named as directories, are skipped;
	// duplicates are swept once.
	wantSweep(t, s, storage.SweepOptions{Dirs: []string{"missing", "a/b", "a/obj", "a/b", "a/b/c"}}, ab)
	wantSweep(t, s, storage.SweepOptions{Dirs: []string{""}}, root)
	wantSweep(t, s, storage.SweepOptions{Dirs: []string{}})
	wantSweep(t, s, storage.SweepOptions{DryRun: true}, c)
	wantSweep(t, s, storage.SweepOptions{Dirs: []string{"c"}}, c)
	wantSweep(t, s, storage.SweepOptions{DryRun: true})
	if after := contents(t, s); !maps.Equal(before, after) {
		t.Errorf("SweepTemp changed the objects:\nbefore %q\n after %q", before, after)
	}
	put(t, s, "a/b/new", "new")
	wantContent(t, s, "a/b/new", "new")
}
