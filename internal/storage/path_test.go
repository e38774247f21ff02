package storage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/storage"
)

// FuzzCheckPathAgreesWithCleanpath: the storage path rules are cleanpath's
// (copied because storage packages import no policy), plus the temporary
// name rule. The two must never drift apart.
func FuzzCheckPathAgreesWithCleanpath(f *testing.F) {
	for _, s := range []string{"a", "a/b", "", "/a", "a/", "a//b", "./a", "a/..", `a\b`, "a\x00b", "\xff",
		"a/" + storage.TempPrefix + "x", ".distributor.json", "é/ü", strings.Repeat("a", 1025)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := storage.CheckPath(p)
		temp := false
		for _, seg := range strings.Split(p, "/") {
			temp = temp || strings.HasPrefix(seg, storage.TempPrefix)
		}
		if len(p) > cleanpath.MaxLen {
			t.Skip("cleanpath also limits the length; storage leaves that to the backend")
		}
		want := cleanpath.Check(p) == nil && !temp
		if (err == nil) != want {
			t.Fatalf("CheckPath(%q) = %v, cleanpath.Check = %v, temp segment %v", p, err, cleanpath.Check(p), temp)
		}
		if err != nil && !errors.Is(err, storage.ErrInvalidPath) {
			t.Fatalf("error %v does not match ErrInvalidPath", err)
		}
	})
}
