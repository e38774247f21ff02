package storagetest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// payload returns n deterministic pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	var key [32]byte
	key[0] = byte(seed)
	key[1] = byte(seed >> 8)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

func put(t *testing.T, s storage.Store, p, data string) {
	t.Helper()
	if _, err := s.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func putBytes(t *testing.T, s storage.Store, p string, data []byte) {
	t.Helper()
	if _, err := s.Put(t.Context(), p, bytes.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func get(t *testing.T, s storage.Store, p string) ([]byte, storage.Version) {
	t.Helper()
	data, v, err := s.Get(t.Context(), p)
	if err != nil {
		t.Fatalf("Get(%q): %v", p, err)
	}
	return data, v
}

func stat(t *testing.T, s storage.Store, p string) storage.Info {
	t.Helper()
	info, err := s.Stat(t.Context(), p)
	if err != nil {
		t.Fatalf("Stat(%q): %v", p, err)
	}
	return info
}

// wantContent checks p's content through both Get and Open.
func wantContent(t *testing.T, s storage.Store, p, want string) {
	t.Helper()
	if data, _ := get(t, s, p); string(data) != want {
		t.Errorf("Get(%q) = %q, want %q", p, data, want)
	}
	r, err := s.Open(t.Context(), p)
	if err != nil {
		t.Fatalf("Open(%q): %v", p, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", p, err)
	}
	if string(data) != want {
		t.Errorf("Open(%q) read %q, want %q", p, data, want)
	}
}

// wantMissing checks that Open, Get and Stat all report ErrNotExist.
func wantMissing(t *testing.T, s storage.Store, p string) {
	t.Helper()
	ctx := t.Context()
	if r, err := s.Open(ctx, p); !errors.Is(err, storage.ErrNotExist) {
		if err == nil {
			r.Close()
		}
		t.Errorf("Open(%q): got %v, want ErrNotExist", p, err)
	}
	if _, _, err := s.Get(ctx, p); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Get(%q): got %v, want ErrNotExist", p, err)
	}
	if _, err := s.Stat(ctx, p); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat(%q): got %v, want ErrNotExist", p, err)
	}
}

func listInfos(t *testing.T, s storage.Store, prefix string) []storage.Info {
	t.Helper()
	var infos []storage.Info
	err := s.List(t.Context(), prefix, func(info storage.Info) error {
		infos = append(infos, info)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return infos
}

func list(t *testing.T, s storage.Store, prefix string) []string {
	t.Helper()
	return paths(listInfos(t, s, prefix))
}

func paths(infos []storage.Info) []string {
	var ps []string
	for _, info := range infos {
		ps = append(ps, info.Path)
	}
	return ps
}

// wantList checks that List(prefix) yields exactly want, in order.
func wantList(t *testing.T, s storage.Store, prefix string, want ...string) {
	t.Helper()
	if got := list(t, s, prefix); !slices.Equal(got, want) {
		t.Errorf("List(%q):\n got %q\nwant %q", prefix, got, want)
	}
}
