package txn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestRecoverRemovesOnlyProvableCreates: recovery removes a file the dead
// run created only if it holds exactly the journaled bytes. A create cut
// short (a power loss before a deferred store's Sync) or a file someone
// else put at that path is not provably the dead run's: it is left in
// place and reported. A replace whose new bytes are not in place is left
// alone, one whose bytes are in place is rolled forward.
func TestRecoverRemovesOnlyProvableCreates(t *testing.T) {
	ctx := context.Background()
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put := func(p, data string) {
		if _, err := st.Put(ctx, p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	src := catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now}
	rec := func(p, data string) catalog.Output {
		return catalog.Output{Path: p, PipelineID: "p", DestinationID: "d", Source: src, Kind: catalog.KindSource,
			SHA256: digest(data), Size: int64(len(data)), CreatedAt: now, UpdatedAt: now}
	}
	kept, moved := rec("kept.txt", "old bytes"), rec("moved.txt", "old moved")
	c := &catalog.Catalog{SchemaVersion: 4, CreatedAt: now, UpdatedAt: now, Outputs: []catalog.Output{kept, moved}}
	data, _ := catalog.Encode(c)
	v, err := storage.PutIf(ctx, st, catalog.FileName, data, "")
	if err != nil {
		t.Fatal(err)
	}
	put("kept.txt", "old bytes")  // the replace never happened
	put("moved.txt", "new moved") // the replace happened
	put("new.txt", "complete")    // a create that completed
	put("cut.txt", "cut sh")      // a create cut short: not the journaled bytes
	write := func(p, data string, existed bool) journal.Op {
		r := rec(p, data)
		return journal.Op{Op: journal.OpWrite, Path: p, Existed: existed, SHA256: r.SHA256, Size: r.Size, Record: &r}
	}
	j := &journal.Journal{RunID: "dead", Command: "run", Started: now, BaseVersion: string(v), Ops: []journal.Op{
		write("cut.txt", "cut short by power loss", false),
		write("kept.txt", "new bytes", true),
		write("moved.txt", "new moved", true),
		write("new.txt", "complete", false),
	}}
	jd, _ := journal.Encode(j)
	if _, err := storage.PutIf(ctx, st, journal.Name, jd, ""); err != nil {
		t.Fatal(err)
	}
	var fenced int
	r, err := Recover(ctx, st, func() error { fenced++; return nil }, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 1 || r.Removed[0] != "new.txt" || r.RemovedBytes != int64(len("complete")) {
		t.Errorf("removed %v (%d B), want [new.txt] (%d B)", r.Removed, r.RemovedBytes, len("complete"))
	}
	if len(r.RolledForward) != 1 || r.RolledForward[0] != "moved.txt" {
		t.Errorf("rolled forward %v, want [moved.txt]", r.RolledForward)
	}
	if len(r.Left) != 1 || r.Left[0].Path != "cut.txt" {
		t.Errorf("left %v, want cut.txt", r.Left)
	}
	if got, _, _ := st.Get(ctx, "cut.txt"); string(got) != "cut sh" {
		t.Errorf("cut.txt = %q: recovery touched bytes it cannot prove are the dead run's", got)
	}
	if _, err := st.Stat(ctx, "new.txt"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("the dead run's complete create was left behind: %v", err)
	}
	if fenced < 3 {
		t.Errorf("fence checked %d times, want one before every change", fenced)
	}
	state, _, err := ReadCatalog(ctx, st)
	if err != nil || state.Status != catalog.StatusCatalog {
		t.Fatalf("catalog after recovery: %v %v", state.Status, err)
	}
	for _, o := range state.Catalog.Outputs {
		sum, size, err := HashObject(ctx, st, o.Path)
		if err != nil || sum != o.SHA256 || size != o.Size {
			t.Errorf("record %s not truthful: %s %d %v", o.Path, sum, size, err)
		}
	}
	if _, err := st.Stat(ctx, journal.Name); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("journal left: %v", err)
	}
}

// TestRecoverStopsWhenFenced: a recoverer that can no longer prove it holds
// the lock changes nothing, and the journal stays for the next holder.
func TestRecoverStopsWhenFenced(t *testing.T) {
	ctx := context.Background()
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	if _, err := st.Put(ctx, "new.txt", strings.NewReader("complete"), 8, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r := catalog.Output{Path: "new.txt", PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource,
		Source: catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now},
		SHA256: digest("complete"), Size: 8, CreatedAt: now, UpdatedAt: now}
	j := &journal.Journal{RunID: "dead", Command: "run", Started: now, Ops: []journal.Op{
		{Op: journal.OpWrite, Path: "new.txt", SHA256: r.SHA256, Size: r.Size, Record: &r}}}
	jd, _ := journal.Encode(j)
	if _, err := storage.PutIf(ctx, st, journal.Name, jd, ""); err != nil {
		t.Fatal(err)
	}
	lapsed := errors.New("lease lapsed")
	if _, err := Recover(ctx, st, func() error { return lapsed }, now); !errors.Is(err, lapsed) {
		t.Fatalf("recover with a lapsed fence: %v", err)
	}
	for _, p := range []string{"new.txt", journal.Name} {
		if _, err := st.Stat(ctx, p); err != nil {
			t.Errorf("%s: %v (a fenced recovery changed the root)", p, err)
		}
	}
}

// TestRecoverRefusesAJournalItCannotRead: a journal that does not say
// exactly one thing is not acted on. Read leniently, a path given twice
// would name the second file and bytes that are not UTF-8 would name the
// file with U+FFFD in its name, and recovery would delete that file (it
// holds the journaled bytes). Read strictly, recovery stops with an error
// naming the journal and the field; nothing is deleted and the journal
// stays for someone to inspect.
func TestRecoverRefusesAJournalItCannotRead(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, victim, want string
		mangle             func(string) string
	}{
		{"a path given twice", "other.txt", "ops[0].path: duplicate field",
			func(s string) string {
				return strings.Replace(s, `"path":"new.txt"`, `"path":"new.txt","path":"other.txt"`, 1)
			}},
		{"a path that is not UTF-8", "b\uFFFD.txt", `ops[0].path "b\xff.txt": is not valid UTF-8`,
			func(s string) string { return strings.Replace(s, `"path":"new.txt"`, "\"path\":\"b\xff.txt\"", 1) }},
		{"a second document", "new.txt", "unexpected data after top-level value",
			func(s string) string { return s + s }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := local.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, p := range []string{"new.txt", tt.victim} {
				if _, err := st.Put(ctx, p, strings.NewReader("complete"), 8, storage.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			r := catalog.Output{Path: "new.txt", PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource,
				Source: catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now},
				SHA256: digest("complete"), Size: 8, CreatedAt: now, UpdatedAt: now}
			jd, _ := journal.Encode(&journal.Journal{RunID: "dead", Command: "run", Started: now, Ops: []journal.Op{
				{Op: journal.OpWrite, Path: "new.txt", SHA256: r.SHA256, Size: r.Size, Record: &r}}})
			mangled := tt.mangle(string(jd))
			if mangled == string(jd) {
				t.Fatal("the journal was not changed")
			}
			if _, err := storage.PutIf(ctx, st, journal.Name, []byte(mangled), ""); err != nil {
				t.Fatal(err)
			}
			_, err = Recover(ctx, st, nil, now)
			if err == nil || !strings.Contains(err.Error(), journal.Name+" at ") ||
				!strings.Contains(err.Error(), "is unreadable") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Recover error = %v, want one naming the journal and %q", err, tt.want)
			}
			for _, p := range []string{"new.txt", tt.victim, journal.Name} {
				if _, err := st.Stat(ctx, p); err != nil {
					t.Errorf("%s: %v (recovery acted on a journal it could not read)", p, err)
				}
			}
		})
	}
}

// The recovery warning stays one bounded line however many paths the dead
// run touched (issue 13.5: it listed all of them, ~20 KB for 3,000 files);
// the full lists are at debug level, one path a line.
func TestRecoveryLogBounded(t *testing.T) {
	rec := &Recovery{Journal: &journal.Journal{RunID: "r"}}
	for i := 0; i < 3000; i++ {
		rec.Removed = append(rec.Removed, fmt.Sprintf("reports/2026/06/19/some-long-report-name-%04d.html", i))
	}
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	logger.Warn("recovered a root left by a dead run", rec.LogAttrs("/srv/www")...)
	line := buf.String()
	if len(line) > 600 || !strings.Contains(line, "removed=\"3000 (") || !strings.Contains(line, "and 2997 more") {
		t.Errorf("warning is %d bytes: %s", len(line), line)
	}
	buf.Reset()
	rec.LogPaths(logger, "/srv/www")
	if n := strings.Count(buf.String(), "\n"); n != 3000 {
		t.Errorf("debug lines: %d, want 3000", n)
	}
}
