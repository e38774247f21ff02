package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// directoryRoots are the backends with directories, each as the YAML of a
// destination and the local directory that holds its root (the SFTP test
// servers serve this machine's file system), so that a test can plant a
// directory or a file behind the tool's back.
func directoryRoots(t *testing.T) []struct {
	name string
	open func(t *testing.T) (yaml, root string)
} {
	sftpRoot := func(open func(*testing.T) backend) func(t *testing.T) (string, string) {
		return func(t *testing.T) (string, string) {
			be := open(t)
			return be.yaml, be.sftp.Root
		}
	}
	return []struct {
		name string
		open func(t *testing.T) (yaml, root string)
	}{
		{"local", func(t *testing.T) (string, string) {
			root := filepath.Join(t.TempDir(), "www")
			return fmt.Sprintf("    backend: local\n    path: %s\n", root), root
		}},
		{"sftp-inprocess", sftpRoot(inProcessSFTP)},
		{"sftp-sshd", sftpRoot(realSFTP)},
	}
}

// TestDirectoryAtPlannedPath: an empty directory where a file is planned
// (and an unmanaged file where a planned path needs a directory) is
// unmanaged content at a planned path: fail_unmanaged naming it, in the dry
// run and the run alike, over no catalog (the root is listed) and over a
// catalog (the planned paths are looked up), and nothing is written.
// Before, the dry run said publish_new and the run failed at the commit.
func TestDirectoryAtPlannedPath(t *testing.T) {
	for _, b := range directoryRoots(t) {
		t.Run(b.name, func(t *testing.T) {
			yaml, root := b.open(t)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"distributor.yaml":  "pipelines:\n  - {id: p, source: b1, destinations: [site]}\ndestinations:\n  - id: site\n" + yaml,
				"b1/report.md":      "# Report\n",
				"b2/report.md":      "# Report\n",
				"b2/data/sales.csv": "day,value\n1,2\n",
				"b3/report.md":      "# Report\n",
				"b3/img/chart.svg":  "<svg/>\n",
			})
			for _, b := range []string{"b1", "b2", "b3"} {
				if res := distributor(t, dir, "bundle", "seal", filepath.Join(dir, b), "--id", "r."+b); res.code != 0 {
					t.Fatalf("seal %s: %s", b, res.stderr)
				}
			}
			mkdir := func(p string) {
				if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(p)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			refused := func(src, want string) {
				t.Helper()
				for _, dry := range []bool{true, false} {
					args := []string{"--pipeline", "p", "--source", filepath.Join(dir, src)}
					if dry {
						args = append(args, "--dry-run")
					}
					d := runOne(t, dir, 1, args...).Pipelines[0].Destinations[0]
					if d.Action != "fail_unmanaged" || !slices.Contains(d.Unmanaged, want) {
						t.Fatalf("run %v: action %s, unmanaged %q; want fail_unmanaged naming %s", args, d.Action, d.Unmanaged, want)
					}
				}
			}
			// No catalog: an empty directory at data/sales.csv, and an
			// unrelated empty one, which is no collision.
			mkdir("data/sales.csv")
			mkdir("uploads")
			refused("b2", "data/sales.csv")
			if _, err := os.Stat(filepath.Join(root, catalog.FileName)); !os.IsNotExist(err) {
				t.Fatalf("a refused run wrote the catalog: %v", err)
			}
			// A catalog: the planned path is looked up, not listed.
			if d := runOne(t, dir, 0, "--pipeline", "p").Pipelines[0].Destinations[0]; d.Action != "publish_new" {
				t.Fatalf("publish b1: %+v", d)
			}
			refused("b2", "data/sales.csv")
			// An unmanaged file where a planned path needs a directory.
			if err := os.WriteFile(filepath.Join(root, "img"), []byte("not a directory\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			refused("b3", "img/chart.svg")
			for _, p := range []string{"data/sales.csv", "uploads"} {
				if fi, err := os.Stat(filepath.Join(root, p)); err != nil || !fi.IsDir() {
					t.Errorf("%s: %v, want the directory left alone", p, err)
				}
			}
		})
	}
}
