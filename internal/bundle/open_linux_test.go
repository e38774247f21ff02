package bundle

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// TestOpenerKeepsAtMostMaxOpenDirs: a bundle with more directories than
// the opener keeps open still opens every file, and no more than
// maxOpenDirs directories stay open.
func TestOpenerKeepsAtMostMaxOpenDirs(t *testing.T) {
	files := map[string]string{}
	for i := range maxOpenDirs + 20 {
		files[fmt.Sprintf("d%03d/f", i)] = fmt.Sprint(i)
	}
	dir := newBundle(t, files)
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for p, want := range files {
		r, err := b.OpenVerified(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != want {
			t.Fatalf("%s = %q, %v", p, got, err)
		}
	}
	if n := len(b.opener.dirs); n > maxOpenDirs {
		t.Errorf("%d directories kept open, at most %d wanted", n, maxOpenDirs)
	}
}
