package retry

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// onlyReader hides every method of its reader but Read (io.Seeker).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// rewinder is a seekable reader that counts its Seeks.
type rewinder struct {
	*bytes.Reader
	seeks int
}

func (r *rewinder) Seek(off int64, whence int) (int64, error) {
	r.seeks++
	return r.Reader.Seek(off, whence)
}

// TestPutSeekable: a Put whose reader can seek is retried from where the
// reader was when Put was called, whatever the failed attempt read.
func TestPutSeekable(t *testing.T) {
	f, s, _, _ := setup(t)
	r := &rewinder{Reader: bytes.NewReader([]byte("..payload"))}
	r.Reader.Seek(2, io.SeekStart)
	f.fail("put", fault{err: errReset, read: 3}, fault{err: errReset, read: 7})
	if _, err := s.Put(t.Context(), "a", r, 7, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, f, "a"); got != "payload" {
		t.Errorf("stored %q", got)
	}
	if n := f.count("put"); n != 3 || s.Retries() != 2 {
		t.Errorf("%d calls, %d retries", n, s.Retries())
	}
}

// TestPutNotReplayable: a Put whose reader cannot seek is retried only
// while nothing was read from it.
func TestPutNotReplayable(t *testing.T) {
	f, s, _, _ := setup(t)
	f.fail("put", fault{err: errReset}) // nothing read: retried
	if _, err := s.Put(t.Context(), "a", onlyReader{strings.NewReader("payload")}, 7, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, f, "a"); got != "payload" || f.count("put") != 2 {
		t.Errorf("stored %q after %d calls", got, f.count("put"))
	}
	f.fail("put", fault{err: errReset, read: 1})
	_, err := s.Put(t.Context(), "b", onlyReader{strings.NewReader("payload")}, 7, storage.PutOptions{})
	if !errors.Is(err, errReset) || !strings.Contains(err.Error(), "cannot seek") {
		t.Errorf("Put: %v", err)
	}
	if n := f.count("put"); n != 3 {
		t.Errorf("%d calls, want 3 (no retry)", n)
	}
	if _, err := f.Stat(t.Context(), "b"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat(b): %v", err)
	}
}

// failingReader yields its bytes, then fails with err; it can seek.
type failingReader struct {
	*bytes.Reader
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF {
		return n, r.err
	}
	return n, err
}

// TestPutReaderFailureNotRetried: a Put that failed because its reader
// did is not retried, even with an error that looks transient.
func TestPutReaderFailureNotRetried(t *testing.T) {
	f, s, _, _ := setup(t)
	r := &failingReader{Reader: bytes.NewReader([]byte("pay")), err: io.ErrUnexpectedEOF}
	_, err := s.Put(t.Context(), "a", r, 7, storage.PutOptions{})
	if !errors.Is(err, io.ErrUnexpectedEOF) || f.count("put") != 1 || s.Retries() != 0 {
		t.Errorf("Put: %v after %d calls", err, f.count("put"))
	}
}

// TestPutLateRead: a Read of a failed attempt's reader after the attempt
// ended fails, and takes nothing from the next attempt.
func TestPutLateRead(t *testing.T) {
	f, s, _, _ := setup(t)
	f.fail("put", fault{err: errReset, read: 2, late: true},
		fault{pass: true, hook: func() {
			close(f.release)
			if err := <-f.lateErr; !errors.Is(err, errAttemptOver) {
				t.Errorf("late Read: %v, want errAttemptOver", err)
			}
		}})
	if _, err := s.Put(t.Context(), "a", strings.NewReader("payload"), 7, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, f, "a"); got != "payload" {
		t.Errorf("stored %q", got)
	}
}

// TestPutNewLostAnswer: PutNew whose first attempt landed but lost its
// answer succeeds: the retry meets ErrPrecondition, and the object holds
// the bytes this call sent.
func TestPutNewLostAnswer(t *testing.T) {
	f, s, _, _ := setup(t)
	f.fail("put-new", fault{err: errReset, after: true})
	if _, err := s.Put(t.Context(), "a", strings.NewReader("payload"), 7, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatal(err)
	}
	if n, o := f.count("put-new"), f.count("open"); n != 2 || o != 1 {
		t.Errorf("%d calls, %d read-backs; want 2 and 1", n, o)
	}
	// The read-back may fail transiently too.
	f.fail("put-new", fault{err: errReset, after: true})
	f.failN("open", 1, errReset)
	if _, err := s.Put(t.Context(), "b", strings.NewReader("payload"), 7, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, f, "b"); got != "payload" {
		t.Errorf("stored %q", got)
	}
}

// TestPutNewLostAnswerDigest: with PutOptions.SHA256 given, the read-back
// of a PutNew whose answer was lost compares the object with that digest,
// without reading the caller's reader again.
func TestPutNewLostAnswerDigest(t *testing.T) {
	f, s, _, _ := setup(t)
	f.fail("put-new", fault{err: errReset, after: true})
	r := &rewinder{Reader: bytes.NewReader([]byte("payload"))}
	opts := storage.PutOptions{Mode: storage.PutCreate, SHA256: fmt.Sprintf("sha256:%x", sha256.Sum256([]byte("payload")))}
	if _, err := s.Put(t.Context(), "a", r, 7, opts); err != nil {
		t.Fatal(err)
	}
	if n, o := f.count("put-new"), f.count("open"); n != 2 || o != 1 || r.seeks != 2 {
		t.Errorf("%d calls, %d read-backs, %d seeks; want 2, 1 and 2 (the start, the rewind)", n, o, r.seeks)
	}
}

// TestPutNewTaken: PutNew meeting another writer's object fails with
// ErrPrecondition, read back only when an earlier attempt may have landed.
func TestPutNewTaken(t *testing.T) {
	t.Run("at once", func(t *testing.T) {
		f, s, _, _ := setup(t)
		put(t, f, "a", "theirs!")
		_, err := s.Put(t.Context(), "a", strings.NewReader("payload"), 7, storage.PutOptions{Mode: storage.PutCreate})
		if !errors.Is(err, storage.ErrPrecondition) || f.count("put-new") != 1 || f.count("open") != 0 {
			t.Errorf("PutNew: %v after %d calls, %d read-backs", err, f.count("put-new"), f.count("open"))
		}
	})
	t.Run("after a partial attempt", func(t *testing.T) {
		f, s, _, _ := setup(t)
		put(t, f, "a", "theirs!")
		f.fail("put-new", fault{err: errReset, read: 3})
		_, err := s.Put(t.Context(), "a", strings.NewReader("payload"), 7, storage.PutOptions{Mode: storage.PutCreate})
		// The first attempt sent 3 of 7 bytes: it cannot have landed.
		if !errors.Is(err, storage.ErrPrecondition) || f.count("put-new") != 2 || f.count("open") != 0 {
			t.Errorf("PutNew: %v after %d calls, %d read-backs", err, f.count("put-new"), f.count("open"))
		}
	})
	t.Run("after a complete attempt", func(t *testing.T) {
		f, s, _, _ := setup(t)
		put(t, f, "a", "theirs!")
		f.fail("put-new", fault{err: errReset, read: 7})
		_, err := s.Put(t.Context(), "a", strings.NewReader("payload"), 7, storage.PutOptions{Mode: storage.PutCreate})
		if !errors.Is(err, storage.ErrPrecondition) || f.count("put-new") != 2 || f.count("open") != 1 {
			t.Errorf("PutNew: %v after %d calls, %d read-backs", err, f.count("put-new"), f.count("open"))
		}
		if got := get(t, f, "a"); got != "theirs!" {
			t.Errorf("stored %q", got)
		}
	})
	t.Run("read-back fails", func(t *testing.T) {
		f, s, _, _ := setup(t)
		f.fail("put-new", fault{err: errReset, after: true})
		f.failN("open", 1, errors.New("disk on fire"))
		_, err := s.Put(t.Context(), "a", strings.NewReader("payload"), 7, storage.PutOptions{Mode: storage.PutCreate})
		if err == nil || errors.Is(err, storage.ErrPrecondition) || !strings.Contains(err.Error(), "outcome unknown") {
			t.Errorf("PutNew: %v; want an unknown outcome, not ErrPrecondition", err)
		}
	})
}

// TestPutIfLostAnswer: PutIf whose write landed but lost its answer
// returns the Version of its bytes without writing again.
func TestPutIfLostAnswer(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprint("existing=", existing), func(t *testing.T) {
			f, s, _, _ := setup(t)
			var base storage.Version
			if existing {
				var err error
				if base, err = storage.PutIf(t.Context(), f.Store, "c", []byte("v1"), ""); err != nil {
					t.Fatal(err)
				}
				f.calls["put-if"] = 0
			}
			f.fail("put-if", fault{err: errReset, after: true})
			v, err := storage.PutIf(t.Context(), s, "c", []byte("v2"), base)
			if err != nil {
				t.Fatal(err)
			}
			data, cur, _ := f.Get(t.Context(), "c")
			if string(data) != "v2" || v != cur {
				t.Errorf("PutIf = %q; stored %q, version %q", v, data, cur)
			}
			if n := f.count("put-if"); n != 1 {
				t.Errorf("%d writes, want 1", n)
			}
		})
	}
}

// TestPutIfNotLanded: PutIf whose write failed before landing is sent
// again when the read-back shows the condition still holds.
func TestPutIfNotLanded(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprint("existing=", existing), func(t *testing.T) {
			f, s, _, _ := setup(t)
			var base storage.Version
			if existing {
				var err error
				if base, err = storage.PutIf(t.Context(), f.Store, "c", []byte("v1"), ""); err != nil {
					t.Fatal(err)
				}
				f.calls["put-if"] = 0
			}
			f.fail("put-if", fault{err: errReset})
			f.failN("read", 1, errReset) // the read-back is retried too
			v, err := storage.PutIf(t.Context(), s, "c", []byte("v2"), base)
			if err != nil {
				t.Fatal(err)
			}
			if data, cur, _ := f.Get(t.Context(), "c"); string(data) != "v2" || v != cur {
				t.Errorf("PutIf = %q; stored %q, version %q", v, data, cur)
			}
			if n := f.count("put-if"); n != 2 || s.Retries() != 2 {
				t.Errorf("%d writes, %d retries; want 2 and 2", n, s.Retries())
			}
		})
	}
}

// TestPutIfConditionGone: when the read-back shows another writer's
// change, PutIf fails with ErrPrecondition without writing again.
func TestPutIfConditionGone(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprint("existing=", existing), func(t *testing.T) {
			f, s, _, _ := setup(t)
			var base storage.Version
			if existing {
				var err error
				if base, err = storage.PutIf(t.Context(), f.Store, "c", []byte("v1"), ""); err != nil {
					t.Fatal(err)
				}
				f.calls["put-if"] = 0
			}
			other := func() { put(t, f.Store, "c", "theirs") }
			f.fail("put-if", fault{err: errReset, hook: other})
			_, err := storage.PutIf(t.Context(), s, "c", []byte("v2"), base)
			if !errors.Is(err, storage.ErrPrecondition) {
				t.Errorf("PutIf: %v, want ErrPrecondition", err)
			}
			if n := f.count("put-if"); n != 1 {
				t.Errorf("%d writes, want 1", n)
			}
			if got := get(t, f, "c"); got != "theirs" {
				t.Errorf("stored %q", got)
			}
		})
	}
	t.Run("deleted", func(t *testing.T) {
		f, s, _, _ := setup(t)
		base, err := storage.PutIf(t.Context(), f.Store, "c", []byte("v1"), "")
		if err != nil {
			t.Fatal(err)
		}
		f.fail("put-if", fault{err: errReset, hook: func() { f.Store.Delete(t.Context(), "c") }})
		if _, err := storage.PutIf(t.Context(), s, "c", []byte("v2"), base); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("PutIf: %v, want ErrPrecondition", err)
		}
	})
}

// TestPutIfLateLanding: a write that lands after the read-back saw the
// condition hold makes the next attempt meet ErrPrecondition; a second
// read-back finds this call's bytes.
func TestPutIfLateLanding(t *testing.T) {
	f, s, _, _ := setup(t)
	late := func() {
		if _, err := storage.PutIf(t.Context(), f.Store, "c", []byte("mine"), ""); err != nil {
			t.Error(err)
		}
	}
	f.fail("put-if", fault{err: errReset}, fault{pass: true, hook: late})
	v, err := storage.PutIf(t.Context(), s, "c", []byte("mine"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, cur, _ := f.Get(t.Context(), "c"); v != cur {
		t.Errorf("PutIf = %q, stored version %q", v, cur)
	}
	if n := f.count("read"); n != 2 { // 2 read-backs
		t.Errorf("%d read-backs, want 2", n)
	}
}

// TestPutIfPrecondition: a plain precondition failure is returned at
// once, without a read-back.
func TestPutIfPrecondition(t *testing.T) {
	f, s, _, _ := setup(t)
	put(t, f, "c", "theirs")
	if _, err := storage.PutIf(t.Context(), s, "c", []byte("mine"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf: %v", err)
	}
	if f.count("put-if") != 1 || f.count("read") != 0 {
		t.Errorf("%d writes, %d reads", f.count("put-if"), f.count("read"))
	}
}

// TestPutIfUnknownOutcome: when the read-back fails for good, PutIf says
// the outcome is unknown and does not claim a precondition failure.
func TestPutIfUnknownOutcome(t *testing.T) {
	f, s, _, _ := setup(t)
	f.fail("put-if", fault{err: errReset})
	f.failN("read", 1, errors.New("disk on fire"))
	_, err := storage.PutIf(t.Context(), s, "c", []byte("mine"), "")
	if err == nil || errors.Is(err, storage.ErrPrecondition) || !strings.Contains(err.Error(), "outcome unknown") {
		t.Errorf("PutIf: %v", err)
	}
	// Attempts run out during the read-backs: unknown too.
	f.fail("put-if", fault{err: errReset})
	f.failN("read", 10, errReset)
	_, err = storage.PutIf(t.Context(), s, "d", []byte("mine"), "")
	if err == nil || errors.Is(err, storage.ErrPrecondition) || !errors.Is(err, errReset) || !strings.Contains(err.Error(), "outcome unknown") {
		t.Errorf("PutIf: %v", err)
	}
}

// seekReader is a ReadSeeker that hides bytes.Reader's other methods.
func seekReader(data []byte) io.ReadSeeker { return struct{ io.ReadSeeker }{bytes.NewReader(data)} }

// TestPutIfStreamRewound: after a transient failure that consumed part of
// the reader, the read-back finds the condition holding and the next
// attempt gets the reader rewound to its start.
func TestPutIfStreamRewound(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprint("existing=", existing), func(t *testing.T) {
			f, s, _, _ := setup(t)
			var base storage.Version
			if existing {
				var err error
				if base, err = storage.PutIf(t.Context(), f.Store, "c", []byte("v1"), ""); err != nil {
					t.Fatal(err)
				}
			}
			data := bytes.Repeat([]byte("payload "), 1<<16)
			f.fail("put-if", fault{err: errReset, read: 1000}, fault{err: errReset, read: int64(len(data))})
			f.failN("read", 1, errReset) // the read-back is retried too
			v, err := s.Put(t.Context(), "c", seekReader(data), int64(len(data)), storage.IfVersion(base))
			if err != nil {
				t.Fatal(err)
			}
			if got, cur, _ := f.Get(t.Context(), "c"); !bytes.Equal(got, data) || v != cur {
				t.Errorf("PutIfStream = %q; stored %d bytes (ours: %v), version %q", v, len(got), bytes.Equal(got, data), cur)
			}
			if !slices.Equal(f.seeks, []int64{0, 0, 0}) {
				t.Errorf("the attempts found the reader at %v, want 0 each time", f.seeks)
			}
			if n := f.count("put-if"); n != 3 || s.Retries() != 3 { // 2 failed writes, 1 failed read-back
				t.Errorf("%d writes, %d retries; want 3 and 3", n, s.Retries())
			}
		})
	}
}

// TestPutIfStreamLostAnswer: a write that landed but lost its answer is
// recognised by the read-back (digest and size of the content), without
// writing again; also when no attempt read the whole reader (the bytes
// were written by someone else: identical, so the call's goal holds).
func TestPutIfStreamLostAnswer(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 300_000)
	t.Run("landed", func(t *testing.T) {
		f, s, _, _ := setup(t)
		f.fail("put-if", fault{err: errReset, after: true})
		v, err := s.Put(t.Context(), "c", seekReader(data), int64(len(data)), storage.IfVersion(""))
		if err != nil {
			t.Fatal(err)
		}
		if _, cur, _ := f.Get(t.Context(), "c"); v != cur || f.count("put-if") != 1 {
			t.Errorf("PutIfStream = %q, stored version %q, %d writes", v, cur, f.count("put-if"))
		}
	})
	t.Run("identical", func(t *testing.T) {
		f, s, _, _ := setup(t)
		same := func() { putBytes(t, f.Store, "c", data) }
		f.fail("put-if", fault{err: errReset, read: 10, hook: same})
		v, err := s.Put(t.Context(), "c", seekReader(data), int64(len(data)), storage.IfVersion(""))
		if err != nil {
			t.Fatal(err)
		}
		if _, cur, _ := f.Get(t.Context(), "c"); v != cur || f.count("put-if") != 1 {
			t.Errorf("PutIfStream = %q, stored version %q, %d writes", v, cur, f.count("put-if"))
		}
	})
	t.Run("other bytes", func(t *testing.T) {
		f, s, _, _ := setup(t)
		other := append(bytes.Clone(data[:len(data)-1]), 'x')
		f.fail("put-if", fault{err: errReset, after: true, hook: func() { putBytes(t, f.Store, "c", other) }})
		// The hook's object takes the name first: the attempt's create
		// fails, and the read-back finds other bytes of the same size.
		_, err := s.Put(t.Context(), "c", seekReader(data), int64(len(data)), storage.IfVersion(""))
		if !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("PutIfStream: %v, want ErrPrecondition", err)
		}
	})
}

func putBytes(t *testing.T, st storage.Store, p string, data []byte) {
	t.Helper()
	if _, err := st.Put(t.Context(), p, bytes.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%s): %v", p, err)
	}
}

// TestPutIfStreamConditionGone: when the read-back shows another writer's
// change, PutIfStream fails with ErrPrecondition without writing again.
func TestPutIfStreamConditionGone(t *testing.T) {
	f, s, _, _ := setup(t)
	base, err := storage.PutIf(t.Context(), f.Store, "c", []byte("v1"), "")
	if err != nil {
		t.Fatal(err)
	}
	f.fail("put-if", fault{err: errReset, read: 2, hook: func() { put(t, f.Store, "c", "theirs") }})
	if _, err := s.Put(t.Context(), "c", seekReader([]byte("v2")), 2, storage.IfVersion(base)); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIfStream: %v, want ErrPrecondition", err)
	}
	if n := f.count("put-if"); n != 1 || get(t, f, "c") != "theirs" {
		t.Errorf("%d writes, stored %q", n, get(t, f, "c"))
	}
}

// badSeeker is a ReadSeeker whose Seek fails once it has been read.
type badSeeker struct {
	r    *bytes.Reader
	read bool
}

func (b *badSeeker) Read(p []byte) (int, error) { b.read = true; return b.r.Read(p) }

func (b *badSeeker) Seek(off int64, whence int) (int64, error) {
	if b.read {
		return 0, errors.New("cannot seek back")
	}
	return b.r.Seek(off, whence)
}

// TestPutIfStreamReaderFailure: a failure of the reader itself (a Read, or
// the Seek of the rewind) is not retried.
func TestPutIfStreamReaderFailure(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		f, s, _, _ := setup(t)
		r := struct {
			io.Reader
			io.Seeker
		}{io.MultiReader(strings.NewReader("abc"), errorReader{errReset}), strings.NewReader("")}
		_, err := s.Put(t.Context(), "c", r, 10, storage.IfVersion(""))
		if !errors.Is(err, errReset) || f.count("put-if") != 1 || s.Retries() != 0 {
			t.Errorf("PutIfStream: %v after %d attempts, %d retries", err, f.count("put-if"), s.Retries())
		}
		if _, _, err := f.Get(t.Context(), "c"); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("object after a failed reader: %v", err)
		}
	})
	t.Run("seek", func(t *testing.T) {
		f, s, _, _ := setup(t)
		f.fail("put-if", fault{err: errReset, read: 2})
		_, err := s.Put(t.Context(), "c", &badSeeker{r: bytes.NewReader([]byte("data"))}, 4, storage.IfVersion(""))
		if err == nil || !strings.Contains(err.Error(), "cannot seek back") || f.count("put-if") != 1 {
			t.Errorf("PutIfStream: %v after %d attempts", err, f.count("put-if"))
		}
	})
}
