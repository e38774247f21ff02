package app

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readChars is the count of bytes this process has read with read(2) and
// its kin (/proc/self/io rchar), or ok false where that is not available.
func readChars(t *testing.T) (n int64, ok bool) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(data) {
		if v, found := strings.CutPrefix(string(line), "rchar:"); found {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// TestNoopRerunReadsNoBundleBytes: a rerun whose every output is
// skip_same decides from the manifest, the catalog and the sizes the walk
// sees: it reads none of the bundle's bytes (4 MiB here; the first
// publish reads them all, which shows the count works). Bytes are
// verified when something is written from them.
func TestNoopRerunReadsNoBundleBytes(t *testing.T) {
	if _, ok := readChars(t); !ok {
		t.Skip("no /proc/self/io here")
	}
	f := newFixture(t, "additive")
	files := map[string]string{}
	for i := range 16 {
		files[fmt.Sprintf("d%d/f%02d.bin", i%4, i)] = strings.Repeat(string(rune('a'+i)), 256<<10)
	}
	f.bundle("mine", "rep", files)
	a := f.app(nil)

	before, _ := readChars(t)
	if d := f.run(a, "mine"); d.Action != "publish_new" {
		t.Fatalf("first run: %s, want publish_new", d.Action)
	}
	first, _ := readChars(t)
	if first-before < 4<<20 {
		t.Fatalf("the first publish read %d bytes, fewer than the bundle's 4 MiB: rchar does not count them", first-before)
	}

	if d := f.run(a, "mine"); d.Action != "skip_same" {
		t.Fatalf("rerun: %s, want skip_same", d.Action)
	}
	second, _ := readChars(t)
	if got := second - first; got > 1<<20 {
		t.Errorf("the no-op rerun read %d bytes: it reads the bundle's files again", got)
	}
}
