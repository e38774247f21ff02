// Package storagetest is the conformance suite that every storage.Store
// adapter runs. An adapter opts in from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store {
//			s, err := local.New(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The suite checks only what the storage.Store contract promises, so it runs
// unchanged against every backend, directory stores and object stores
// alike. Backend-specific behaviour
// (symbolic links, file modes, pruning of empty directories) belongs in the
// adapter's own tests.
//
// The package also holds what several adapters' tests share: scenarios
// against a partitioned network (StalledPut, StalledReads, Bounded), the
// real test servers' environment (ServerEnv), and helpers for roots on
// this machine's disk (DirSnapshot, DirEntries, WriteFile, PlantTempFile).
package storagetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Run runs every conformance test as a subtest of t. Each subtest calls
// newStore for a fresh, empty store; newStore owns the store's cleanup (it
// should register t.Cleanup to close it and remove its data). Options add
// what the suite cannot do through the Store interface (see WithPlantTemp,
// WithTempCreate, WithMakeDir and WithUnstorableNames).
func Run(t *testing.T, newStore func(t *testing.T) storage.Store, opts ...Option) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
	t.Run("OddNames", func(t *testing.T) { testOddNames(t, newStore(t), cfg.unstorable) })
	for _, tc := range streamTests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
	for _, tc := range rewriteTests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if !s.Properties().Rewrite {
				t.Skip("the store does not rewrite (Properties.Rewrite)")
			}
			tc.fn(t, s)
		})
	}
	for _, tc := range stageTests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
	for _, tc := range sweepTests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsPlant && cfg.plantTemp == nil {
				t.Skip("the adapter's tests give no way to plant a temporary object (WithPlantTemp)")
			}
			tc.fn(t, newStore(t), cfg.plantTemp)
		})
	}
	runDirTests(t, newStore, cfg)
	for _, tc := range tempCreateTests {
		t.Run(tc.name, func(t *testing.T) {
			if cfg.tempCreate == nil {
				t.Skip("the adapter does not create through temporary files, or its tests give no hooks (WithTempCreate)")
			}
			tc.fn(t, newStore(t), cfg.tempCreate)
		})
	}
}

// Option configures Run.
type Option func(*config)

type config struct {
	plantTemp  PlantTemp
	tempCreate *TempCreate
	makeDir    MakeDir
	unstorable func(name string) bool
}

// WithUnstorableNames tells the suite that the store's server cannot keep
// the names for which unstorable reports true (Pure-FTPd rewrites a
// trailing space): OddNames then wants a write of such a name refused
// with storage.ErrInvalidPath, leaving nothing, rather than stored under
// another name, and checks the other names as on every store.
func WithUnstorableNames(unstorable func(name string) bool) Option {
	return func(c *config) { c.unstorable = unstorable }
}

// PlantTemp creates, behind the store's back, one temporary object of the
// kind an interrupted write leaves in the store directory dir ("" is the
// root), creating dir if needed, and returns the store path that
// Store.SweepTemp reports for it. Each call creates a new one.
type PlantTemp func(t *testing.T, s storage.Store, dir string) string

// WithPlantTemp lets the suite test SweepTemp on temporary objects. Without
// it only the tests that need none run (the others are skipped).
func WithPlantTemp(plant PlantTemp) Option {
	return func(c *config) { c.plantTemp = plant }
}

var tests = []struct {
	name string
	fn   func(t *testing.T, s storage.Store)
}{
	{"RoundTrip", testRoundTrip},
	{"IsTransient", testIsTransient},
	{"Unsupported", testUnsupported},
	{"PutReplaces", testPutReplaces},
	{"PutNew", testPutNew},
	{"ZeroLength", testZeroLength},
	{"NestedPaths", testNestedPaths},
	{"FailingReader", testFailingReader},
	{"SizeMismatch", testSizeMismatch},
	{"StatSize", testStatSize},
	{"Missing", testMissing},
	{"DeleteMissing", testDeleteMissing},
	{"Delete", testDelete},
	{"ListOrder", testListOrder},
	{"ListPrefix", testListPrefix},
	{"ListEmpty", testListEmpty},
	{"ListStops", testListStops},
	{"PutIfCreate", testPutIfCreate},
	{"PutIfVersion", testPutIfVersion},
	{"PutIfAfterPut", testPutIfAfterPut},
	{"PutIfCreateRace", testPutIfCreateRace},
	{"InvalidPaths", testInvalidPaths},
	{"ContextCancelled", testContextCancelled},
	{"DigestCutShort", testDigestCutShort},
	{"LargeObject", testLargeObject},
	{"ConcurrentPuts", testConcurrentPuts},
	{"ReadersSeeWholeObjects", testReadersSeeWholeObjects},
}

func testRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	put(t, s, "hello.txt", "hello, world\n")

	r, err := s.Open(ctx, "hello.txt")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if string(got) != "hello, world\n" {
		t.Errorf("Open read %q, want %q", got, "hello, world\n")
	}

	data, v := get(t, s, "hello.txt")
	if string(data) != "hello, world\n" {
		t.Errorf("Get = %q, want %q", data, "hello, world\n")
	}
	if v == "" {
		t.Error("Get returned the zero Version for an existing object")
	}
	if _, v2 := get(t, s, "hello.txt"); v2 != v {
		t.Errorf("Get twice: versions %q and %q differ", v, v2)
	}

	info := stat(t, s, "hello.txt")
	if info.Path != "hello.txt" || info.Size != 13 || info.ModTime.IsZero() {
		t.Errorf("Stat = %+v, want path hello.txt, size 13, a modification time", info)
	}
	if s.String() == "" {
		t.Error("String() is empty")
	}
}

func testPutReplaces(t *testing.T, s storage.Store) {
	put(t, s, "f", "a much longer first version")
	put(t, s, "f", "short")
	wantContent(t, s, "f", "short")
	if info := stat(t, s, "f"); info.Size != 5 {
		t.Errorf("Stat size = %d, want 5", info.Size)
	}
	wantList(t, s, "", "f")
}

// testPutNew: PutNew creates, and refuses a taken name with
// ErrPrecondition, leaving the object and no temporary object behind.
func testPutNew(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if _, err := s.Put(ctx, "d/new", strings.NewReader("first"), 5, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatalf("PutNew of a free name: %v", err)
	}
	wantContent(t, s, "d/new", "first")
	_, err := s.Put(ctx, "d/new", strings.NewReader("second!"), 7, storage.PutOptions{Mode: storage.PutCreate})
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutNew of a taken name: %v, want ErrPrecondition", err)
	}
	put(t, s, "d/old", "put")
	if _, err := s.Put(ctx, "d/old", strings.NewReader("x"), 1, storage.PutOptions{Mode: storage.PutCreate}); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutNew over a Put: %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "d/new", "first")
	wantContent(t, s, "d/old", "put")
	wantList(t, s, "", "d/new", "d/old")
	if temps, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary objects after a refused PutNew: %v %v", temps, err)
	}
}

func testZeroLength(t *testing.T, s storage.Store) {
	put(t, s, "empty", "")
	wantContent(t, s, "empty", "")
	if data, _ := get(t, s, "empty"); data == nil {
		t.Error("Get of an empty object returned nil data, which reads as no object")
	}
	if info := stat(t, s, "empty"); info.Size != 0 {
		t.Errorf("Stat size = %d, want 0", info.Size)
	}
	infos := listInfos(t, s, "")
	if len(infos) != 1 || infos[0].Path != "empty" || infos[0].Size != 0 {
		t.Errorf("List = %+v, want one entry empty of size 0", infos)
	}
	// Replace a non-empty object with an empty one.
	put(t, s, "f", "content")
	put(t, s, "f", "")
	wantContent(t, s, "f", "")
}

func testNestedPaths(t *testing.T, s storage.Store) {
	put(t, s, "a/b/c/d.txt", "deep")
	put(t, s, "a/top.txt", "top")
	wantContent(t, s, "a/b/c/d.txt", "deep")
	wantList(t, s, "", "a/b/c/d.txt", "a/top.txt")
	// Directories are not objects.
	for _, dir := range []string{"a", "a/b", "a/b/c"} {
		wantMissing(t, s, dir)
	}
}

// oddNames are names that trip up URL encoding, shells and file systems.
var oddNames = []string{
	"with space.txt",
	" leading and trailing ",
	"unicode-é-ß-日本語-🙂.txt",
	"hash#fragment",
	"percent%20encoded%2Fslash",
	"plus+sign",
	"question?mark",
	"amp&ersand=1",
	`double"quote`,
	"single'quote",
	"colon:semi;comma,",
	"brackets[]{}()<>",
	"star*pipe|caret^tilde~",
	"-leading-dash",
	".hidden",
	"..double-dot-prefix",
	"trailing.dot.",
	"@at$dollar!bang",
	"dir with space/é/file #1.txt",
	strings.Repeat("x", 200),
	"long/" + strings.Repeat("y", 200) + "/z",
}

func testOddNames(t *testing.T, s storage.Store, unstorable func(string) bool) {
	ctx := t.Context()
	var names []string
	for _, name := range oddNames {
		if unstorable == nil || !unstorable(name) {
			names = append(names, name)
			continue
		}
		_, err := s.Put(ctx, name, strings.NewReader("x"), 1, storage.PutOptions{})
		if !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("Put(%q) of a name the server cannot keep: %v, want storage.ErrInvalidPath", name, err)
		}
	}
	for _, name := range names {
		put(t, s, name, "content of "+name)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	wantList(t, s, "", want...)
	for _, name := range names {
		wantContent(t, s, name, "content of "+name)
		if info := stat(t, s, name); info.Path != name || info.Size != int64(len("content of "+name)) {
			t.Errorf("Stat(%q) = %+v", name, info)
		}
		wantList(t, s, name, name)
	}
	for _, name := range names {
		if err := s.Delete(ctx, name); err != nil {
			t.Errorf("Delete(%q): %v", name, err)
		}
		wantMissing(t, s, name)
	}
	wantList(t, s, "")
}

// errBoom is the error the test readers fail with.
var errBoom = errors.New("storagetest: reader failed")

// failingReader yields data[:n] and then fails with errBoom.
type failingReader struct {
	data []byte
	n    int
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errBoom
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data, r.n = r.data[k:], r.n-k
	return k, nil
}

func testFailingReader(t *testing.T, s storage.Store) {
	ctx := t.Context()
	for _, tc := range []struct {
		name      string
		size, cut int
	}{
		{"small", 10, 3},
		{"immediately", 10, 0},
		{"multi-chunk", 3<<20 + 17, 2<<20 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := payload(tc.size, 1)
			// No object before: none after.
			_, err := s.Put(ctx, "new", &failingReader{data: data, n: tc.cut}, int64(tc.size), storage.PutOptions{})
			if err == nil {
				t.Fatal("Put with a failing reader succeeded")
			}
			wantMissing(t, s, "new")
			// An old object survives.
			put(t, s, "old", "old content")
			_, err = s.Put(ctx, "old", &failingReader{data: data, n: tc.cut}, int64(tc.size), storage.PutOptions{})
			if err == nil {
				t.Fatal("Put with a failing reader succeeded")
			}
			wantContent(t, s, "old", "old content")
			// Nested, in a directory the failed Put may have created.
			if _, err := s.Put(ctx, "sub/dir/new", &failingReader{data: data, n: tc.cut}, int64(tc.size), storage.PutOptions{}); err == nil {
				t.Fatal("Put with a failing reader succeeded")
			}
			wantMissing(t, s, "sub/dir/new")
			wantList(t, s, "", "old") // no temporary object is listed
			if err := s.Delete(ctx, "old"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func testSizeMismatch(t *testing.T, s storage.Store) {
	ctx := t.Context()
	put(t, s, "f", "old content")
	for _, tc := range []struct {
		name string
		data string
		size int64
	}{
		{"short", "12345", 10},
		{"long", "1234567890", 5},
		{"empty for non-zero", "", 1},
		{"one byte for zero", "x", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Put(ctx, "f", strings.NewReader(tc.data), tc.size, storage.PutOptions{}); err == nil {
				t.Errorf("Put of %d bytes with size %d succeeded", len(tc.data), tc.size)
			}
			wantContent(t, s, "f", "old content")
			if _, err := s.Put(ctx, "g", strings.NewReader(tc.data), tc.size, storage.PutOptions{}); err == nil {
				t.Errorf("Put of %d bytes with size %d succeeded", len(tc.data), tc.size)
			}
			wantMissing(t, s, "g")
			wantList(t, s, "", "f")
		})
	}
}

func testStatSize(t *testing.T, s storage.Store) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 65536 + 3} {
		p := fmt.Sprintf("size-%d", n)
		putBytes(t, s, p, payload(n, uint64(n)))
		if info := stat(t, s, p); info.Size != int64(n) || info.Path != p {
			t.Errorf("Stat(%q) = %+v, want size %d", p, info, n)
		}
	}
}

func testMissing(t *testing.T, s storage.Store) {
	wantMissing(t, s, "nope")
	wantMissing(t, s, "no/such/dir/file")
	put(t, s, "file", "x")
	wantMissing(t, s, "file/below-a-file")
	wantMissing(t, s, "fil")
	wantMissing(t, s, "file2")
}

func testDeleteMissing(t *testing.T, s storage.Store) {
	ctx := t.Context()
	for _, p := range []string{"nope", "no/such/dir/file"} {
		if err := s.Delete(ctx, p); err != nil {
			t.Errorf("Delete(%q) of a missing object: %v", p, err)
		}
	}
	wantList(t, s, "")
}

func testDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	put(t, s, "f", "x")
	put(t, s, "d/a", "a")
	put(t, s, "d/b", "b")
	for _, p := range []string{"f", "d/a"} {
		if err := s.Delete(ctx, p); err != nil {
			t.Fatalf("Delete(%q): %v", p, err)
		}
		wantMissing(t, s, p)
		if err := s.Delete(ctx, p); err != nil {
			t.Errorf("second Delete(%q): %v", p, err)
		}
	}
	wantList(t, s, "", "d/b")
	wantContent(t, s, "d/b", "b")
	// The name is free again.
	put(t, s, "f", "again")
	wantContent(t, s, "f", "again")
}

// orderNames exercise byte-wise ordering: a per-directory walk would put
// "a/b" before "a-b" and "a.b"; byte-wise, '-' < '.' < '/' < '0'.
var orderNames = []string{
	"a/b", "a-b", "a.b", "a0", "a", "a/b/c", "a/b-c", "a/a", "ab", "A", "B",
	"Z/z", "_", "~", "é", "e", "z", "b/a", "b.", "b-",
}

func testListOrder(t *testing.T, s storage.Store) {
	// "a" and "a/b" cannot both be objects on a file system: use "a" as a
	// directory only, and "a/b" as a directory too (it holds "a/b/c").
	names := slices.DeleteFunc(slices.Clone(orderNames), func(n string) bool { return n == "a" || n == "a/b" })
	for i, name := range names {
		putBytes(t, s, name, payload(i, uint64(i)))
	}
	want := slices.Clone(names)
	slices.Sort(want)
	infos := listInfos(t, s, "")
	got := paths(infos)
	if !slices.Equal(got, want) {
		t.Fatalf("List order:\n got %q\nwant %q", got, want)
	}
	for _, info := range infos {
		i := slices.Index(names, info.Path)
		if info.Size != int64(i) {
			t.Errorf("List: %s has size %d, want %d", info.Path, info.Size, i)
		}
		if info.ModTime.IsZero() {
			t.Errorf("List: %s has no modification time", info.Path)
		}
	}
}

func testListPrefix(t *testing.T, s storage.Store) {
	for _, name := range []string{"a-b", "a.b", "a/b/c", "a/b-c", "a/c/d", "a/cat", "a0", "ab", "b", "x/y"} {
		put(t, s, name, name)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"a-b", "a.b", "a/b-c", "a/b/c", "a/c/d", "a/cat", "a0", "ab", "b", "x/y"}},
		{"a", []string{"a-b", "a.b", "a/b-c", "a/b/c", "a/c/d", "a/cat", "a0", "ab"}},
		{"a/", []string{"a/b-c", "a/b/c", "a/c/d", "a/cat"}},
		{"a/b", []string{"a/b-c", "a/b/c"}},
		{"a/b/", []string{"a/b/c"}},
		{"a/c", []string{"a/c/d", "a/cat"}},
		{"a/c/", []string{"a/c/d"}},
		{"a/c/d", []string{"a/c/d"}},
		{"a-", []string{"a-b"}},
		{"a.b", []string{"a.b"}},
		{"b", []string{"b"}},
		{"b/", nil},
		{"x/y/", nil},
		{"zzz", nil},
		{"nope/", nil},
		{"nope/deeper/x", nil},
	} {
		got := list(t, s, tc.prefix)
		if !slices.Equal(got, tc.want) {
			t.Errorf("List(%q):\n got %q\nwant %q", tc.prefix, got, tc.want)
		}
	}
}

func testListEmpty(t *testing.T, s storage.Store) {
	for _, prefix := range []string{"", "a", "a/"} {
		wantList(t, s, prefix)
	}
}

func testListStops(t *testing.T, s storage.Store) {
	for _, name := range []string{"a", "b", "c/d"} {
		put(t, s, name, name)
	}
	errStop := errors.New("stop here")
	calls := 0
	err := s.List(t.Context(), "", func(storage.Info) error {
		calls++
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Errorf("List returned %v, want the callback's error", err)
	}
	if calls != 1 {
		t.Errorf("callback called %d times after returning an error, want 1", calls)
	}
}

func testInvalidPaths(t *testing.T, s storage.Store) {
	ctx := t.Context()
	for _, p := range invalidPaths {
		check := func(method string, err error) {
			t.Helper()
			if !errors.Is(err, storage.ErrInvalidPath) {
				t.Errorf("%s(%q): got %v, want ErrInvalidPath", method, p, err)
			}
		}
		_, err := s.Put(ctx, p, strings.NewReader("x"), 1, storage.PutOptions{})
		check("Put", err)
		_, err = storage.PutIf(ctx, s, p, []byte("x"), "")
		check("PutIf", err)
		_, err = storage.PutIf(ctx, s, p, []byte("x"), "some-version")
		check("PutIf(version)", err)
		_, err = s.Put(ctx, p, strings.NewReader("x"), 1, storage.IfVersion(""))
		check("PutIfStream", err)
		_, err = s.Put(ctx, p, strings.NewReader("x"), 1, storage.IfVersion("some-version"))
		check("PutIfStream(version)", err)
		_, _, err = s.Get(ctx, p)
		check("Get", err)
		called := false
		_, err = s.ReadVersioned(ctx, p, func(io.Reader) error { called = true; return nil })
		check("ReadVersioned", err)
		if called {
			t.Errorf("ReadVersioned(%q) called fn", p)
		}
		r, err := s.Open(ctx, p)
		if err == nil {
			r.Close()
		}
		check("Open", err)
		_, err = s.Stat(ctx, p)
		check("Stat", err)
		check("Delete", s.Delete(ctx, p))
	}
	for _, prefix := range invalidPrefixes {
		err := s.List(ctx, prefix, func(storage.Info) error { return nil })
		if !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("List(%q): got %v, want ErrInvalidPath", prefix, err)
		}
	}
	wantList(t, s, "")
}
