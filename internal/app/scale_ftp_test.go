package app

import (
	"fmt"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
)

// TestFTPCommandsDoNotGrowWithTheRoot publishes one new file into FTP roots
// whose catalogs record 2,000 and 20,000 outputs of another pipeline, then
// reruns it (a no-op), on each FTP test server: the commands each run sends
// on its control connection are the same for both sizes (no listing of
// the root: the catalog is read once, rewritten once), and the no-op's are
// few. One connection: with more, how many a run opens (each logs in)
// depends on timing, not on the root.
func TestFTPCommandsDoNotGrowWithTheRoot(t *testing.T) {
	for _, server := range ftptest.Servers {
		t.Run(server, func(t *testing.T) {
			counts := map[int][2]int64{}
			for _, n := range []int{2000, 20000} {
				l := ftptest.Real(t, server).FreshRoot(t)
				st, err := ftp.New(t.Context(), ftp.Options{Host: l.Host, Port: l.Port, User: l.User,
					Password: ftp.Secret(l.Password), CAFile: l.CAFile, Root: l.Path})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				if _, err := storage.PutIf(t.Context(), st, catalog.FileName, archiveCatalog(t, n), ""); err != nil {
					t.Fatal(err)
				}
				counter := ftptest.CountCommands(t, fmt.Sprintf("%s:%d", l.Host, l.Port))
				f := newFixture(t, config.WorkflowAdditive)
				f.bundle("mine", "mine.one", map[string]string{"daily/2026-06-20/report.html": "<p>new</p>\n"})
				cfg := writeConfig(t, f.dir, "distributor.yaml", fmt.Sprintf(`pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
    backend: ftp
    path: %s
    ftp: {host: %s, port: %d, user: %s, ca_file: %s, connections: 1}
`, l.Path, l.Host, counter.Port(), l.User, l.CAFile))
				a := f.app(nil)
				a.Getenv = func(k string) string {
					if k == "DISTRIBUTOR_FTP_PASSWORD" {
						return l.Password
					}
					return ""
				}
				var got [2]int64
				for i, want := range []string{"upsert_additive", "skip_same"} {
					counter.Take()
					rep, err := a.Run(t.Context(), cfg, RunOptions{Pipelines: []string{"mine"}})
					if err != nil {
						t.Fatal(err)
					}
					d := rep.Pipelines[0].Destinations[0]
					if d.Status != report.StatusOK || d.Action != want || d.Counts.Retained != n {
						t.Fatalf("%d records, run %d: %s %s retained %d (%v), want ok %s", n, i+1, d.Status, d.Action, d.Counts.Retained, d.Error, want)
					}
					got[i] = counter.Take()
				}
				t.Logf("%s, %d records: +1 file: %d commands; no-op rerun: %d commands", server, n, got[0], got[1])
				counts[n] = got
			}
			// Runs of one size differ by a command now and then (seen: 94 and
			// 95 on Pure-FTPd; not yet explained, see the closing note of
			// issue 35); a run that grew with the root would list its 20 or
			// 200 directories, or read records in pages: hundreds more.
			for i, what := range []string{"+1 file", "no-op rerun"} {
				if d := counts[20000][i] - counts[2000][i]; d > 2 || d < -2 {
					t.Errorf("%s: commands depend on the root's size: %d at 2,000 records, %d at 20,000", what, counts[2000][i], counts[20000][i])
				}
			}
			if noop := counts[2000][1]; noop > 20 {
				t.Errorf("a no-op rerun sends %d commands, want at most 20 (the login's 8 or so, the catalog's read, the reserved names)", noop)
			}
		})
	}
}
