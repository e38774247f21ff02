package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// The maintenance tests share one fixture: a configuration with two
// pipelines, alpha and beta, publishing to one local root "www" through the
// destinations shared-a and shared-b, plus a templated destination "arch".
// Catalogs are written directly with chosen updated_at times, and the App's
// clock is fixed at mtNow.

var mtNow = time.Date(2026, 6, 20, 12, 0, 0, 0, time.UTC)

const mtConfig = `pipelines:
  - {id: alpha, source: a, destinations: [shared-a, arch, nopolicy]}
  - {id: beta, source: b, destinations: [shared-b]}
destinations:
  - id: shared-a
    backend: local
    path: www
    retention: {prune: {older_than: 10d, keep_min: 3}}
  - id: shared-b
    backend: local
    path: www
    retention: {prune: {older_than: 1d}}
  - id: arch
    backend: local
    path: "arch/{source_date}"
    retention: {prune: {older_than: 1d}}
  - id: nopolicy
    backend: local
    path: www
`

var (
	alphaA = catalog.Owner{PipelineID: "alpha", DestinationID: "shared-a"}
	betaB  = catalog.Owner{PipelineID: "beta", DestinationID: "shared-b"}
)

// mtRec is one managed file of a fixture root.
type mtRec struct {
	path    string
	owner   catalog.Owner
	content string
	age     time.Duration // updated_at = mtNow - age
}

type mtFixture struct {
	t    *testing.T
	dir  string // config directory
	root string // the shared root, dir/www
	cfg  *config.Config
}

func newMT(t *testing.T) *mtFixture {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "distributor.yaml")
	if err := os.WriteFile(path, []byte(mtConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadEnv(path, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return &mtFixture{t: t, dir: dir, root: filepath.Join(dir, "www"), cfg: cfg}
}

func (f *mtFixture) app() *app.App {
	a := app.New("test", nil)
	a.Now = func() time.Time { return mtNow }
	return a
}

func mtSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

// populate writes recs (files and a truthful catalog) into root and the
// unmanaged files, and returns the catalog.
func (f *mtFixture) populate(root string, recs []mtRec, unmanaged map[string]string) *catalog.Catalog {
	f.t.Helper()
	c := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, CreatedAt: mtNow.Add(-100 * 24 * time.Hour),
		UpdatedAt: mtNow.Add(-time.Hour), Outputs: []catalog.Output{}}
	for _, r := range recs {
		mtWrite(f.t, root, r.path, r.content)
		at := mtNow.Add(-r.age)
		c.Outputs = append(c.Outputs, catalog.Output{Path: r.path, PipelineID: r.owner.PipelineID, DestinationID: r.owner.DestinationID,
			Source: catalog.Source{ID: "src", Digest: mtSum("src"), Created: at}, Kind: catalog.KindSource,
			SHA256: mtSum(r.content), Size: int64(len(r.content)), CreatedAt: at, UpdatedAt: at})
	}
	for p, content := range unmanaged {
		mtWrite(f.t, root, p, content)
	}
	data, err := catalog.Encode(c)
	if err != nil {
		f.t.Fatal(err)
	}
	mtWrite(f.t, root, catalog.FileName, string(data))
	return c
}

func mtWrite(t *testing.T, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mtSameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		} else if a != b {
			t.Errorf("%s changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		}
	}
}

// mtCatalog reads the root's catalog and checks that it is truthful: every
// record's file exists with its sha256 and size.
func mtCatalog(t *testing.T, root string) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	st, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := app.ReadRoot(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if r.State.Status != catalog.StatusCatalog {
		t.Fatalf("state %s (%v), want catalog", r.State.Status, r.State.Problem)
	}
	res, err := app.Audit(ctx, st, r.State.Catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truthful() {
		t.Errorf("catalog not truthful: missing %v, corrupt %v", res.Missing, res.Corrupt)
	}
	return r.State.Catalog
}

func mtPaths(c *catalog.Catalog) []string {
	ps := make([]string, 0, len(c.Outputs))
	for _, o := range c.Outputs {
		ps = append(ps, o.Path)
	}
	sort.Strings(ps)
	return ps
}

func mtEqual(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func mtExists(t *testing.T, root, p string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// mtSeal writes a bundle with one file and the given created time, and
// returns its directory.
func (f *mtFixture) mtSeal(name string, created time.Time) string {
	f.t.Helper()
	dir := filepath.Join(f.dir, name)
	mtWrite(f.t, dir, "index.md", "# hello\n")
	if _, err := bundle.Seal(context.Background(), dir, "b."+name, created); err != nil {
		f.t.Fatal(err)
	}
	return dir
}

// mtStandard is the shared root most tests start from: alpha owns five
// outputs of different ages (keep_min 3 protects old1.txt although it is
// old), beta two (one very old), and two files are unmanaged.
func (f *mtFixture) mtStandard() *catalog.Catalog {
	day := 24 * time.Hour
	return f.populate(f.root, []mtRec{
		{"alpha/new.txt", alphaA, "new", 1 * day},
		{"alpha/mid.txt", alphaA, "mid", 5 * day},
		{"alpha/old1.txt", alphaA, "old1", 20 * day},
		{"alpha/old2.txt", alphaA, "old2", 30 * day},
		{"alpha/old3.txt", alphaA, "old3", 40 * day},
		{"beta/ancient.txt", betaB, "ancient", 400 * day},
		{"beta/fresh.txt", betaB, "fresh", time.Hour},
	}, map[string]string{"hand.txt": "by hand", "alpha/stray.txt": "stray"})
}

func mtOpts(o catalog.Owner) app.Root {
	return app.Root{Pipeline: o.PipelineID, Destination: o.DestinationID}
}

// mtStore returns an OpenStore that opens local stores and lets wrap
// decorate them.
func mtStore(wrap func(storage.Store) storage.Store) app.OpenStore {
	return func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
		st, err := local.New(root)
		if err != nil {
			return nil, err
		}
		return wrap(st), nil
	}
}
