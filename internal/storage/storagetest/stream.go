package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// streamTests check ReadVersioned and PutIfStream, the streaming forms of
// Get and PutIf.
var streamTests = []struct {
	name string
	fn   func(t *testing.T, s storage.Store)
}{
	{"ReadVersionedIsGet", testReadVersionedIsGet},
	{"ReadVersionedLarge", testReadVersionedLarge},
	{"ReadVersionedDrains", testReadVersionedDrains},
	{"ReadVersionedMissing", testReadVersionedMissing},
	{"ReadVersionedFnError", testReadVersionedFnError},
	{"PutIfStreamCreate", testPutIfStreamCreate},
	{"PutIfStreamVersion", testPutIfStreamVersion},
	{"PutIfStreamBadReader", testPutIfStreamBadReader},
	{"PutIfStreamFromStart", testPutIfStreamFromStart},
	{"PutIfStreamLarge", testPutIfStreamLarge},
	{"PutIfStreamCancelled", testPutIfStreamCancelled},
}

// readAll is ReadVersioned with an fn that reads everything.
func readAll(t *testing.T, s storage.Store, p string) ([]byte, storage.Version) {
	t.Helper()
	var data []byte
	v, err := s.ReadVersioned(t.Context(), p, func(r io.Reader) (err error) {
		data, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		t.Fatalf("ReadVersioned(%q): %v", p, err)
	}
	if v == "" {
		t.Fatalf("ReadVersioned(%q) returned the zero Version", p)
	}
	return data, v
}

// streamReader is a ReadSeeker over data that hides bytes.Reader's other
// methods (WriterTo, ReaderAt...): the store must read it.
func streamReader(data []byte) io.ReadSeeker {
	return struct{ io.ReadSeeker }{bytes.NewReader(data)}
}

func putIfStream(t *testing.T, s storage.Store, p string, data []byte, ifVersion storage.Version) storage.Version {
	t.Helper()
	v, err := s.Put(t.Context(), p, streamReader(data), int64(len(data)), storage.IfVersion(ifVersion))
	if err != nil {
		t.Fatalf("PutIfStream(%q, %q): %v", p, ifVersion, err)
	}
	if v == "" {
		t.Fatalf("PutIfStream(%q) returned the zero Version", p)
	}
	return v
}

// testReadVersionedIsGet: ReadVersioned shows the bytes Get returns, with
// the same Version, whether Put, PutIf or PutIfStream wrote them.
func testReadVersionedIsGet(t *testing.T, s storage.Store) {
	ctx := t.Context()
	put(t, s, "by-put", "written by Put")
	vIf, err := storage.PutIf(ctx, s, "d/by-put-if", []byte("written by PutIf"), "")
	if err != nil {
		t.Fatal(err)
	}
	vStream := putIfStream(t, s, "by-stream", []byte("written by PutIfStream"), "")
	put(t, s, "empty", "")
	for p, want := range map[string]string{
		"by-put": "written by Put", "d/by-put-if": "written by PutIf",
		"by-stream": "written by PutIfStream", "empty": "",
	} {
		data, v := readAll(t, s, p)
		gdata, gv := get(t, s, p)
		if string(data) != want || string(gdata) != want {
			t.Errorf("%s: ReadVersioned read %q, Get %q; want %q", p, data, gdata, want)
		}
		if v != gv {
			t.Errorf("%s: ReadVersioned's Version %q, Get's %q", p, v, gv)
		}
		switch p {
		case "d/by-put-if":
			if v != vIf {
				t.Errorf("%s: ReadVersioned's Version %q, PutIf returned %q", p, v, vIf)
			}
		case "by-stream":
			if v != vStream {
				t.Errorf("%s: ReadVersioned's Version %q, PutIfStream returned %q", p, v, vStream)
			}
		}
	}
	// The Version works for the compare-and-swap of both writes.
	_, v := readAll(t, s, "by-stream")
	v2, err := storage.PutIf(ctx, s, "by-stream", []byte("replaced by PutIf"), v)
	if err != nil {
		t.Fatalf("PutIf with ReadVersioned's Version: %v", err)
	}
	_, v = readAll(t, s, "by-stream")
	if v != v2 {
		t.Errorf("ReadVersioned's Version %q, PutIf returned %q", v, v2)
	}
	putIfStream(t, s, "by-stream", []byte("replaced by PutIfStream"), v)
	wantContent(t, s, "by-stream", "replaced by PutIfStream")
}

// testReadVersionedLarge: a multi-megabyte object streams to fn in small
// reads, whole and unchanged, with Get's Version.
func testReadVersionedLarge(t *testing.T, s storage.Store) {
	data := payload(4<<20+321, 11)
	putBytes(t, s, "large", data)
	var got bytes.Buffer
	reads := 0
	v, err := s.ReadVersioned(t.Context(), "large", func(r io.Reader) error {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			reads++
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if err != nil {
		t.Fatalf("ReadVersioned: %v", err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("ReadVersioned streamed %d bytes that differ from the %d written", got.Len(), len(data))
	}
	if reads < 2 {
		t.Errorf("fn read the object in %d reads", reads)
	}
	if _, gv := get(t, s, "large"); v != gv {
		t.Errorf("ReadVersioned's Version %q, Get's %q", v, gv)
	}
}

// testReadVersionedDrains: what fn leaves unread still counts: the
// Version is the whole object's.
func testReadVersionedDrains(t *testing.T, s storage.Store) {
	data := payload(3<<20+5, 12)
	putBytes(t, s, "obj", data)
	_, want := get(t, s, "obj")
	for _, n := range []int{0, 1, 100 << 10} {
		v, err := s.ReadVersioned(t.Context(), "obj", func(r io.Reader) error {
			head := make([]byte, n)
			if _, err := io.ReadFull(r, head); err != nil {
				return err
			}
			if !bytes.Equal(head, data[:n]) {
				return errors.New("the first bytes differ from those written")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("ReadVersioned reading %d bytes: %v", n, err)
		}
		if v != want {
			t.Errorf("ReadVersioned with fn reading %d bytes: Version %q, want Get's %q", n, v, want)
		}
	}
}

// testReadVersionedMissing: a missing object, or a name that is no object,
// fails with ErrNotExist before fn is called (with ErrNotObject where Get
// reports it too).
func testReadVersionedMissing(t *testing.T, s storage.Store) {
	put(t, s, "dir/obj", "x")
	for _, p := range []string{"nope", "no/such/obj", "dir", "dir/obj/below"} {
		called := false
		v, err := s.ReadVersioned(t.Context(), p, func(io.Reader) error {
			called = true
			return nil
		})
		if !errors.Is(err, storage.ErrNotExist) || v != "" {
			t.Errorf("ReadVersioned(%q) = %q, %v; want ErrNotExist", p, v, err)
		}
		if called {
			t.Errorf("ReadVersioned(%q) called fn", p)
		}
		_, _, gerr := s.Get(t.Context(), p)
		if errors.Is(err, storage.ErrNotObject) != errors.Is(gerr, storage.ErrNotObject) {
			t.Errorf("ReadVersioned(%q): %v; Get: %v: they disagree on ErrNotObject", p, err, gerr)
		}
	}
}

// testReadVersionedFnError: fn's error comes back as it is, with no
// Version, whether fn read nothing, part or all of the object.
func testReadVersionedFnError(t *testing.T, s storage.Store) {
	putBytes(t, s, "obj", payload(2<<20, 13))
	errFn := errors.New("fn failed")
	for _, n := range []int64{0, 10, 2 << 20} {
		v, err := s.ReadVersioned(t.Context(), "obj", func(r io.Reader) error {
			if _, err := io.CopyN(io.Discard, r, n); err != nil {
				return err
			}
			return errFn
		})
		if err != errFn || v != "" {
			t.Errorf("ReadVersioned with fn failing after %d bytes = %q, %v; want the fn's error itself", n, v, err)
		}
	}
	wantContent(t, s, "obj", string(payload(2<<20, 13)))
}

// testPutIfStreamCreate: the zero Version creates only; a taken name fails
// with ErrPrecondition and keeps its object.
func testPutIfStreamCreate(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v1 := putIfStream(t, s, "x/y/state", []byte("one"), "")
	if _, gv := get(t, s, "x/y/state"); gv != v1 {
		t.Errorf("Get's Version %q, PutIfStream returned %q", gv, v1)
	}
	if _, err := s.Put(ctx, "x/y/state", streamReader([]byte("two")), 3, storage.IfVersion("")); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("second create: %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "x/y/state", "one")
	put(t, s, "plain", "p")
	if _, err := s.Put(ctx, "plain", streamReader([]byte("q")), 1, storage.IfVersion("")); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("create over a Put object: %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "plain", "p")
	putIfStream(t, s, "empty", nil, "")
	wantContent(t, s, "empty", "")
	wantList(t, s, "", "empty", "plain", "x/y/state")
	if temps, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary objects after PutIfStream: %v %v", temps, err)
	}
}

// testPutIfStreamVersion: compare-and-swap: the current Version replaces,
// a stale one (or any for an absent object) fails with ErrPrecondition and
// changes nothing.
func testPutIfStreamVersion(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v1 := putIfStream(t, s, "state", []byte("one"), "")
	v2 := putIfStream(t, s, "state", []byte("two"), v1)
	if v2 == v1 {
		t.Errorf("new Version %q equals the old one", v2)
	}
	if _, err := s.Put(ctx, "state", streamReader([]byte("three")), 5, storage.IfVersion(v1)); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("stale Version: %v, want ErrPrecondition", err)
	}
	data, v := get(t, s, "state")
	if string(data) != "two" || v != v2 {
		t.Errorf("Get = %q, %q; want %q, %q", data, v, "two", v2)
	}
	put(t, s, "state", "by put")
	if _, err := s.Put(ctx, "state", streamReader([]byte("lost")), 4, storage.IfVersion(v2)); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("Version made stale by a Put: %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "state", "by put")
	if _, err := s.Put(ctx, "absent", streamReader([]byte("x")), 1, storage.IfVersion(v1)); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("Version of an absent object: %v, want ErrPrecondition", err)
	}
	wantMissing(t, s, "absent")
	wantList(t, s, "", "state")
	// A store may write the new object beside the old one while it checks
	// the condition (SFTP does): a failed condition leaves no temporary
	// object either.
	if temps, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary objects after failed conditions: %v %v", temps, err)
	}
}

// testPutIfStreamBadReader: a reader that yields fewer or more than size
// bytes, or fails, fails the write and leaves the old object (or none).
func testPutIfStreamBadReader(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v := putIfStream(t, s, "state", []byte("old"), "")
	big := payload(3<<20, 14)
	for _, tc := range []struct {
		name string
		r    io.ReadSeeker
		size int64
	}{
		{"short", streamReader([]byte("12345")), 10},
		{"short multi-chunk", streamReader(big), int64(len(big)) + 1},
		{"long", streamReader([]byte("1234567890")), 5},
		{"empty for non-zero", streamReader(nil), 1},
		{"failing", &failingSeeker{r: bytes.NewReader(big), after: 2<<20 + 7}, int64(len(big))},
	} {
		for _, ifVersion := range []storage.Version{v, ""} {
			p := "state"
			if ifVersion == "" {
				p = "new"
			}
			if _, err := s.Put(ctx, p, tc.r, tc.size, storage.IfVersion(ifVersion)); err == nil {
				t.Errorf("%s reader (%s): PutIfStream succeeded", tc.name, p)
			}
		}
	}
	data, cur := get(t, s, "state")
	if string(data) != "old" || cur != v {
		t.Errorf("after failed writes: %q, %q; want %q, %q", data, cur, "old", v)
	}
	wantMissing(t, s, "new")
	wantList(t, s, "", "state")
	if temps, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary objects after failed PutIfStreams: %v %v", temps, err)
	}
}

// failingSeeker is a ReadSeeker whose reads fail once after bytes have
// been read.
type failingSeeker struct {
	r     *bytes.Reader
	after int64
	read  int64
}

func (f *failingSeeker) Read(p []byte) (int, error) {
	if f.read >= f.after {
		return 0, errors.New("injected read failure")
	}
	if left := f.after - f.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := f.r.Read(p)
	f.read += int64(n)
	return n, err
}

func (f *failingSeeker) Seek(off int64, whence int) (int64, error) {
	pos, err := f.r.Seek(off, whence)
	f.read = pos
	return pos, err
}

// testPutIfStreamFromStart: the content is the reader's from its start,
// wherever the reader stands.
func testPutIfStreamFromStart(t *testing.T, s storage.Store) {
	r := bytes.NewReader([]byte("0123456789"))
	if _, err := r.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "f", r, 10, storage.IfVersion("")); err != nil {
		t.Fatalf("PutIfStream of a reader at offset 6: %v", err)
	}
	wantContent(t, s, "f", "0123456789")
}

// testPutIfStreamLarge: a multi-megabyte object is created and replaced
// whole, and a stale Version still fails on it.
func testPutIfStreamLarge(t *testing.T, s storage.Store) {
	ctx := t.Context()
	one, two := payload(6<<20+1, 15), payload(6<<20+3, 16)
	v1 := putIfStream(t, s, "big", one, "")
	v2 := putIfStream(t, s, "big", two, v1)
	if _, err := s.Put(ctx, "big", streamReader(one), int64(len(one)), storage.IfVersion(v1)); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("stale Version: %v, want ErrPrecondition", err)
	}
	if _, err := s.Put(ctx, "big", streamReader(one), int64(len(one)), storage.IfVersion("")); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("create over an object: %v, want ErrPrecondition", err)
	}
	data, v := readAll(t, s, "big")
	if !bytes.Equal(data, two) || v != v2 {
		t.Errorf("read %d bytes (equal: %v), Version %q; want the %d bytes of the second write, %q",
			len(data), bytes.Equal(data, two), v, len(two), v2)
	}
}

// testPutIfStreamCancelled: a done context fails the write and leaves the
// old object (or none), before or during the transfer.
func testPutIfStreamCancelled(t *testing.T, s storage.Store) {
	v := putIfStream(t, s, "state", []byte("old"), "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Put(ctx, "state", streamReader([]byte("new")), 3, storage.IfVersion(v)); err == nil {
		t.Error("PutIfStream with a cancelled context succeeded")
	}
	if _, err := s.Put(ctx, "new", strings.NewReader("new"), 3, storage.IfVersion("")); err == nil {
		t.Error("PutIfStream (create) with a cancelled context succeeded")
	}
	data := payload(4<<20, 17)
	for _, ifVersion := range []storage.Version{v, ""} {
		p := "state"
		if ifVersion == "" {
			p = "new"
		}
		ctx, cancel := context.WithCancel(t.Context())
		r := &cancelSeeker{cancelReader: cancelReader{r: bytes.NewReader(data), after: 64 << 10, cancel: cancel}}
		if _, err := s.Put(ctx, p, r, int64(len(data)), storage.IfVersion(ifVersion)); err == nil {
			t.Errorf("PutIfStream(%q) cancelled mid-stream succeeded", p)
		}
		cancel()
	}
	wantContent(t, s, "state", "old")
	wantMissing(t, s, "new")
}

// cancelSeeker is a cancelReader that can seek (its reader is a
// *bytes.Reader).
type cancelSeeker struct{ cancelReader }

func (c *cancelSeeker) Seek(off int64, whence int) (int64, error) {
	return c.r.(*bytes.Reader).Seek(off, whence)
}
