package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/distributor-dev/distributor/internal/cli"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

// backend is one remote destination root for the end-to-end tests: the
// YAML of its destination fields (backend, path and the backend block) and
// a store opened directly on the same root, to look behind the CLI's back.
type backend struct {
	yaml  string        // destination fields, indented for a list item
	store storage.Store // the same root, opened by the test
	// badHostKey, for sftp: the same destination with a known_hosts file
	// that does not hold the server's key.
	badHostKey string
	// The adapter options of the root (one of them is set).
	sftp *sftp.Options
	s3   *s3.Options
	gcs  *gcs.Options
	// azure: the root's container, prefix and endpoint.
	azure *azure.Options
	ftp   *ftp.Options
	// disk, where set, is the root's directory on this machine (the FTP
	// test servers and sshd keep it here): a test may look there, at disk
	// speed.
	disk string
	// list, where set, lists the root with a client independent of
	// distributor: each object's name below the root with its content.
	list func(t *testing.T) map[string]string
}

// backends lists the backends to run the scenarios on: the in-process
// servers always, the real ones of scripts/test-servers when they run (and
// always under CI).
var backends = []struct {
	name string
	open func(t *testing.T) backend
}{
	{"sftp-inprocess", inProcessSFTP},
	{"sftp-sshd", realSFTP},
	{"sftp-proftpd", realProFTPD},
	{"s3-gofakes3", fakeS3},
	{"s3-versitygw", realS3},
	{"s3-seaweedfs", realWeed},
	{"gcs-fake", fakeGCS},
	{"azure-azurite", azurite},
	{"ftp-vsftpd", ftpBackend("vsftpd")},
	{"ftp-pureftpd", ftpBackend("pureftpd")},
	{"ftp-proftpd", ftpBackend("proftpd")},
}

func sftpBackend(t *testing.T, opts sftp.Options) backend {
	t.Helper()
	st, err := sftp.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	block := func(knownHosts string) string {
		return fmt.Sprintf(`    backend: sftp
    path: %s
    sftp:
      host: %s
      port: %d
      user: %s
      identity_file: %s
      known_hosts_file: %s
`, opts.Root, opts.Host, opts.Port, opts.User, opts.IdentityFile, knownHosts)
	}
	empty := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(empty, []byte("# no keys\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return backend{yaml: block(opts.KnownHostsFile), store: st, badHostKey: block(empty), sftp: &opts}
}

func inProcessSFTP(t *testing.T) backend {
	return sftpBackend(t, sftpOptions(sftptest.Start(t).Login()))
}

func realSFTP(t *testing.T) backend {
	b := sftpBackend(t, sftpOptions(sftptest.SSHD(t).FreshRoot(t)))
	// sshd serves this machine's file system unchrooted: the root's path
	// is its directory here (a paused writer's test looks there, as fast as
	// a writer that commits staged renames back to back).
	b.disk = b.sftp.Root
	return b
}

// realProFTPD is ProFTPD's mod_sftp of scripts/test-servers.
func realProFTPD(t *testing.T) backend {
	return sftpBackend(t, sftpOptions(sftptest.ProFTPD(t).FreshRoot(t)))
}

// sftpOptions returns the sftp adapter's Options for a test server's login.
func sftpOptions(l sftptest.Login) sftp.Options {
	return sftp.Options{Host: l.Host, Port: l.Port, User: l.User, IdentityFile: l.ClientKey, KnownHostsFile: l.KnownHosts, Root: l.Root}
}

// s3Backend is a fresh prefix on an S3 server (emptied when the test ends).
func s3Backend(t *testing.T, srv *s3test.Server) backend {
	t.Helper()
	opts := srv.Options("e2e/" + rand.Text()[:10])
	return backend{store: srv.Open(t, opts.Prefix), s3: &opts, list: s3Lister(srv, opts.Prefix), yaml: fmt.Sprintf(`    backend: s3
    path: %s
    s3:
      bucket: %s
      region: %s
      endpoint: %s
      path_style: true
`, opts.Prefix, opts.Bucket, opts.Region, opts.Endpoint)}
}

func fakeS3(t *testing.T) backend {
	srv := s3test.Start(t)
	// The CLI reads credentials from the environment it is given: the
	// process environment here (see distributor).
	for k, v := range srv.Env {
		t.Setenv(k, v)
	}
	return s3Backend(t, srv)
}

func realS3(t *testing.T) backend {
	return s3Backend(t, s3test.Versitygw(t))
}

// realWeed is the SeaweedFS S3 gateway of scripts/test-servers.
func realWeed(t *testing.T) backend {
	return s3Backend(t, s3test.Weed(t))
}

// fakeGCS is a fresh prefix on the fake-gcs-server of
// scripts/test-servers (emptied when the test ends).
func fakeGCS(t *testing.T) backend {
	srv := gcstest.FakeGCS(t)
	opts := srv.Options("e2e/" + rand.Text()[:10])
	return backend{store: srv.Open(t, opts.Prefix), gcs: &opts, list: gcsLister(srv, opts.Prefix), yaml: fmt.Sprintf(`    backend: gcs
    path: %s
    gcs:
      bucket: %s
      endpoint: %s
      anonymous: true
`, opts.Prefix, opts.Bucket, opts.Endpoint)}
}

// azurite is a fresh prefix in the Azurite container of
// scripts/test-servers (emptied when the test ends); the CLI finds the
// account's key in AZURE_STORAGE_KEY.
func azurite(t *testing.T) backend {
	srv := azuretest.Azurite(t)
	t.Setenv("AZURE_STORAGE_KEY", srv.Key)
	opts := srv.Options(srv.UniquePrefix(t))
	return backend{store: azuretest.OpenWith(t, opts), azure: &opts, list: azureLister(srv, opts.Prefix), yaml: fmt.Sprintf(`    backend: azure
    path: %s
    azure:
      account: %s
      container: %s
      endpoint: %s
`, opts.Prefix, opts.Account, opts.Container, opts.Endpoint)}
}

// ftpBackend opens a fresh directory on the FTP server of scripts/test-servers
// named server; the CLI finds the password in DISTRIBUTOR_FTP_PASSWORD, and
// the test reads the server back with ftptest's own client.
func ftpBackend(server string) func(t *testing.T) backend {
	return func(t *testing.T) backend {
		l := ftptest.Real(t, server).FreshRoot(t)
		t.Setenv("DISTRIBUTOR_FTP_PASSWORD", l.Password)
		opts := ftpOptions(l)
		st, err := ftp.New(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return backend{store: st, ftp: &opts, disk: l.Dir(), list: func(t *testing.T) map[string]string { return l.ListFiles(t) }, yaml: fmt.Sprintf(`    backend: ftp
    path: %s
    ftp:
      host: %s
      port: %d
      user: %s
      ca_file: %s
`, opts.Root, opts.Host, opts.Port, opts.User, opts.CAFile)}
	}
}

// ftpOptions returns the ftp adapter's Options for a test server's login.
func ftpOptions(l ftptest.Login) ftp.Options {
	return ftp.Options{Host: l.Host, Port: l.Port, User: l.User, Password: ftp.Secret(l.Password), CAFile: l.CAFile, Root: l.Path}
}

// cliResult is one in-process CLI run.
type cliResult struct {
	code           int
	stdout, stderr string
}

// distributor runs the CLI in-process in dir.
func distributor(t *testing.T, dir string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(t.Context(), append([]string{"--config", filepath.Join(dir, "distributor.yaml")}, args...), wide(cli.Env{
		Stdout: &stdout, Stderr: &stderr, Version: "test",
		Getenv: os.Getenv, // credentials (AWS_*), as the real binary reads them
	}))
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// runDoc is the part of `run --output json` the tests read.
type runDoc struct {
	Pipelines []struct {
		Error        *string `json:"error"`
		Destinations []struct {
			DestinationID string   `json:"destination_id"`
			Action        string   `json:"action"`
			Status        string   `json:"status"`
			Unmanaged     []string `json:"unmanaged"`
			Error         *string  `json:"error"`
			Counts        struct {
				Created, Overwritten, Unchanged, Deleted, Retained int
			} `json:"counts"`
		} `json:"destinations"`
	} `json:"pipelines"`
}

// runOne runs one pipeline and returns its single destination's result.
func runOne(t *testing.T, dir string, wantCode int, args ...string) runDoc {
	t.Helper()
	res := distributor(t, dir, append([]string{"run", "--output", "json"}, args...)...)
	if res.code != wantCode {
		t.Fatalf("run %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, res.code, wantCode, res.stdout, res.stderr)
	}
	var doc runDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("run %v: output is not JSON: %v\n%s", args, err, res.stdout)
	}
	if len(doc.Pipelines) != 1 || len(doc.Pipelines[0].Destinations) != 1 {
		t.Fatalf("run %v: want one pipeline with one destination:\n%s", args, res.stdout)
	}
	return doc
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// objects lists the root, with the content of each object.
func objects(t *testing.T, st storage.Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	var paths []string
	if err := st.List(t.Context(), "", func(i storage.Info) error {
		paths = append(paths, i.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, _, err := st.Get(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		got[p] = string(data)
	}
	return got
}

func keys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// config is the scenarios' configuration: two pipelines share one root,
// alpha with workflow replacement under alpha/, beta and gamma additive
// under their own prefixes.
const config = `pipelines:
  - id: alpha
    source: a1
    destinations: [shared-replace]
  - id: beta
    source: b1
    destinations: [shared]
  - id: gamma
    source: c1
    destinations: [shared]
destinations:
  - id: shared
    paths: {prefix: "{pipeline_id}/"}
%[1]s  - id: shared-replace
    workflow: replacement
    paths: {prefix: "alpha/"}
%[1]s`

// TestBackends runs the publishing scenarios through the CLI against each
// remote backend.
func TestBackends(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			be := b.open(t)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"distributor.yaml": fmt.Sprintf(config, be.yaml),
				"a1/index.md":      "# Alpha\n\nfirst\n",
				"a1/old.txt":       "old\n",
				"a1/keep.txt":      "keep\n",
				"a2/index.md":      "# Alpha\n\nsecond\n",
				"a2/keep.txt":      "keep\n",
				"a2/new.txt":       "new\n",
				"b1/one.txt":       "one\n",
				"c1/report.md":     "# Gamma\n",
			})
			for _, b := range []string{"a1", "a2", "b1", "c1"} {
				if res := distributor(t, dir, "bundle", "seal", filepath.Join(dir, b), "--id", "bundle."+b, "--created", "2026-06-19T12:00:00Z"); res.code != 0 {
					t.Fatalf("seal %s: %s", b, res.stderr)
				}
			}
			ctx := t.Context()
			st := be.store

			// publish_new, then skip_same.
			d := runOne(t, dir, 0, "--pipeline", "alpha").Pipelines[0].Destinations[0]
			if d.Action != "publish_new" || d.Status != "ok" || d.Counts.Created != 3 {
				t.Fatalf("first run: %+v", d)
			}
			got := be.objects(t)
			if want := []string{".distributor.json", "alpha/index.html", "alpha/keep.txt", "alpha/old.txt"}; !slices.Equal(keys(got), want) {
				t.Fatalf("after publish_new: %q, want %q", keys(got), want)
			}
			if !strings.Contains(got["alpha/index.html"], "first") || got["alpha/keep.txt"] != "keep\n" {
				t.Errorf("published content: %q", got)
			}
			if d := runOne(t, dir, 0, "--pipeline", "alpha").Pipelines[0].Destinations[0]; d.Action != "skip_same" {
				t.Errorf("second run: %+v", d)
			}

			// additive upsert of another pipeline into the same root.
			d = runOne(t, dir, 0, "--pipeline", "beta").Pipelines[0].Destinations[0]
			if d.Action != "upsert_additive" || d.Counts.Created != 1 || d.Counts.Retained != 3 {
				t.Errorf("beta: %+v", d)
			}

			// A hand-placed object that collides with nothing is left alone.
			hand := "placed by a human\n"
			if _, err := st.Put(ctx, "hand.txt", strings.NewReader(hand), int64(len(hand)), storage.PutOptions{}); err != nil {
				t.Fatal(err)
			}

			// replacement deletes only its own omitted outputs.
			d = runOne(t, dir, 0, "--pipeline", "alpha", "--source", filepath.Join(dir, "a2")).Pipelines[0].Destinations[0]
			// (A run over a valid catalog looks only at planned paths: it does
			// not see hand.txt, so it does not report it either.)
			if d.Action != "replace_catalog" || d.Counts.Deleted != 1 || d.Counts.Created != 1 || len(d.Unmanaged) != 0 {
				t.Errorf("alpha replacement: %+v", d)
			}
			got = be.objects(t)
			if want := []string{".distributor.json", "alpha/index.html", "alpha/keep.txt", "alpha/new.txt", "beta/one.txt", "hand.txt"}; !slices.Equal(keys(got), want) {
				t.Errorf("after replacement: %q, want %q", keys(got), want)
			}
			if !strings.Contains(got["alpha/index.html"], "second") || got["hand.txt"] != hand {
				t.Errorf("after replacement: %q", got)
			}

			// fail_unmanaged: gamma's planned path holds a hand-placed object.
			if _, err := st.Put(ctx, "gamma/report.html", strings.NewReader(hand), int64(len(hand)), storage.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			before := be.objects(t)
			d = runOne(t, dir, 1, "--pipeline", "gamma").Pipelines[0].Destinations[0]
			if d.Action != "fail_unmanaged" || !slices.Contains(d.Unmanaged, "gamma/report.html") {
				t.Errorf("gamma: %+v", d)
			}
			if after := be.objects(t); !maps.Equal(before, after) {
				t.Errorf("fail_unmanaged changed the root:\nbefore %q\nafter  %q", before, after)
			}

			maintenance(t, dir, be)
		})
	}
}

// maintenance runs the maintenance commands that this build has.
func maintenance(t *testing.T, dir string, be backend) {
	ctx, st := t.Context(), be.store
	if !hasCommand(t, dir, "verify") {
		t.Log("no verify command in this build: skipping")
		return
	}
	verify := func(wantCode int) map[string]json.RawMessage {
		t.Helper()
		res := distributor(t, dir, "verify", "--pipeline", "alpha", "--destination", "shared-replace", "--output", "json")
		if res.code != wantCode {
			t.Fatalf("verify: exit %d, want %d\n%s%s", res.code, wantCode, res.stdout, res.stderr)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatalf("verify output: %v\n%s", err, res.stdout)
		}
		return doc
	}
	if doc := verify(0); string(doc["ok"]) != "3" {
		t.Errorf("verify of an intact root: ok = %s", doc["ok"])
	}
	// Bitrot: same size, other bytes.
	if _, err := st.Put(ctx, "alpha/keep.txt", strings.NewReader("KEEP\n"), 5, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	doc := verify(1)
	var corrupt []struct{ Path string }
	json.Unmarshal(doc["corrupt"], &corrupt)
	if len(corrupt) != 1 || corrupt[0].Path != "alpha/keep.txt" || string(doc["ok"]) != "2" {
		t.Errorf("verify after a modification: corrupt %s, ok %s", doc["corrupt"], doc["ok"])
	}
	// A missing output is reported by verify and dropped by reconcile-state.
	if err := st.Delete(ctx, "alpha/new.txt"); err != nil {
		t.Fatal(err)
	}
	doc = verify(1)
	var missing []struct{ Path string }
	json.Unmarshal(doc["missing"], &missing)
	if len(missing) != 1 || missing[0].Path != "alpha/new.txt" {
		t.Errorf("verify after a deletion: missing %s", doc["missing"])
	}
	if !hasCommand(t, dir, "reconcile-state") {
		return
	}
	res := distributor(t, dir, "reconcile-state", "--pipeline", "alpha", "--destination", "shared-replace", "--output", "json")
	if res.code != 0 || !strings.Contains(res.stdout, "alpha/new.txt") {
		t.Errorf("reconcile-state: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	catalog, _, err := st.Get(ctx, ".distributor.json")
	if err != nil || strings.Contains(string(catalog), "alpha/new.txt") {
		t.Errorf("catalog after reconcile-state still records alpha/new.txt (%v)", err)
	}
	got := be.objects(t)
	if _, ok := got["alpha/new.txt"]; ok || got["alpha/keep.txt"] != "KEEP\n" {
		t.Errorf("after verify and reconcile-state: %q", got)
	}
	// state show prints the catalog exactly as stored.
	res = distributor(t, dir, "state", "show", "--pipeline", "alpha", "--destination", "shared-replace", "--output", "json")
	if res.code != 0 || strings.TrimSuffix(res.stdout, "\n") != strings.TrimSuffix(got[".distributor.json"], "\n") {
		t.Errorf("state show: exit %d\n%s%s\nthe root holds\n%s", res.code, res.stdout, res.stderr, got[".distributor.json"])
	}
	// A rerun writes the output reconcile-state dropped again.
	d := runOne(t, dir, 0, "--pipeline", "alpha", "--source", filepath.Join(dir, "a2")).Pipelines[0].Destinations[0]
	if d.Action != "replace_catalog" || d.Counts.Created != 1 || d.Counts.Unchanged != 2 {
		t.Errorf("rerun after reconcile-state: %+v", d)
	}
	if got := be.objects(t); got["alpha/new.txt"] != "new\n" || !strings.Contains(got[".distributor.json"], "alpha/new.txt") {
		t.Errorf("after the rerun: %q", keys(got))
	}
}

// hasCommand reports whether the CLI has the command.
func hasCommand(t *testing.T, dir, name string) bool {
	return distributor(t, dir, name, "--help").code == 0
}

// TestUnknownHostKeyWritesNothing: a run against an SFTP server whose host
// key the known_hosts file does not hold fails before anything is written.
func TestUnknownHostKeyWritesNothing(t *testing.T) {
	for _, b := range backends {
		if !strings.HasPrefix(b.name, "sftp") {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			be := b.open(t)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"distributor.yaml": fmt.Sprintf(config, be.badHostKey),
				"a1/index.md":      "# Alpha\n",
				"b1/one.txt":       "one\n",
				"c1/report.md":     "# Gamma\n",
			})
			if res := distributor(t, dir, "bundle", "seal", filepath.Join(dir, "a1"), "--id", "a1"); res.code != 0 {
				t.Fatal(res.stderr)
			}
			res := distributor(t, dir, "run", "--pipeline", "alpha")
			if res.code != 1 {
				t.Fatalf("run: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
			}
			out := res.stdout + res.stderr
			if !strings.Contains(out, "SHA256:") || !strings.Contains(out, "not in known_hosts_file") {
				t.Errorf("the failure does not name the host key:\n%s", out)
			}
			if got := objects(t, be.store); len(got) != 0 {
				t.Errorf("objects written despite the unknown host key: %q", keys(got))
			}
			if _, err := be.store.Stat(t.Context(), ".distributor.json"); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("catalog: %v", err)
			}
		})
	}
}

// TestRemoteExamples runs the examples that need servers (examples/sftp,
// examples/s3) against the test servers: the connection settings and the
// roots are overridden, everything else is the example as shipped. The
// first run publishes every destination, the second finds nothing to do.
func TestRemoteExamples(t *testing.T) {
	for _, b := range backends {
		kind, _, _ := strings.Cut(b.name, "-")
		t.Run(b.name, func(t *testing.T) {
			be := b.open(t)
			example, err := filepath.Abs(filepath.Join("..", "..", "examples", kind))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(example, "distributor.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]any
			if err := yaml.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			for _, p := range cfg["pipelines"].([]any) {
				p := p.(map[string]any)
				p["source"] = filepath.Join(example, p["source"].(string))
			}
			for _, d := range cfg["destinations"].([]any) {
				d := d.(map[string]any)
				id := d["id"].(string)
				switch {
				case be.sftp != nil:
					d["path"] = be.sftp.Root + "/" + id
					d["sftp"] = map[string]any{
						"host": be.sftp.Host, "port": be.sftp.Port, "user": be.sftp.User,
						"identity_file": be.sftp.IdentityFile, "known_hosts_file": be.sftp.KnownHostsFile,
					}
				case be.s3 != nil:
					d["path"] = be.s3.Prefix + "/" + id
					d["s3"] = map[string]any{
						"bucket": be.s3.Bucket, "region": be.s3.Region, "endpoint": be.s3.Endpoint, "path_style": true,
					}
				case be.azure != nil:
					d["path"] = be.azure.Prefix + "/" + id
					d["azure"] = map[string]any{"account": be.azure.Account, "container": be.azure.Container, "endpoint": be.azure.Endpoint}
				case be.gcs != nil:
					d["path"] = be.gcs.Prefix + "/" + id
					d["gcs"] = map[string]any{"bucket": be.gcs.Bucket, "endpoint": be.gcs.Endpoint, "anonymous": true}
				case be.ftp != nil:
					d["path"] = be.ftp.Root + "/" + id
					d["ftp"] = map[string]any{"host": be.ftp.Host, "port": be.ftp.Port, "user": be.ftp.User, "ca_file": be.ftp.CAFile}
				}
			}
			out, err := yaml.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"distributor.yaml": string(out)})
			for i, want := range []string{"publish_new", "skip_same"} {
				res := distributor(t, dir, "run", "--output", "json")
				if res.code != 0 {
					t.Fatalf("run %d: exit %d\n%s%s", i+1, res.code, res.stdout, res.stderr)
				}
				var doc runDoc
				if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
					t.Fatal(err)
				}
				for _, d := range doc.Pipelines[0].Destinations {
					if d.Action != want || d.Status != "ok" {
						t.Errorf("run %d: %s: %s %s, want %s", i+1, d.DestinationID, d.Action, d.Status, want)
					}
				}
			}
			got := be.objects(t)
			for _, p := range []string{"latest/index.html", "web/index.html", "site/index.html"} {
				if strings.Contains(got[p], "<html") {
					return
				}
			}
			t.Errorf("no published index.html at the roots: %q", keys(got))
		})
	}
}

// TestLargeIntentOnEveryBackend: a change whose intent is over the lock
// record's 64 KiB goes to .distributor.journal, streamed op by op
// (journal.Stream: rewound, measured, signed or retried by each adapter's
// compare-and-swap Put); the run publishes every file, records them all and
// leaves no journal.
func TestLargeIntentOnEveryBackend(t *testing.T) {
	const n = 240 // about 450 bytes an op: over 64 KiB
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			be := b.open(t)
			dir := t.TempDir()
			files := map[string]string{"distributor.yaml": "pipelines:\n  - id: many\n    source: m\n    destinations: [d]\ndestinations:\n  - id: d\n" + be.yaml}
			for i := range n {
				files[fmt.Sprintf("m/f/%04d.txt", i)] = fmt.Sprint(i)
			}
			writeFiles(t, dir, files)
			if res := distributor(t, dir, "bundle", "seal", filepath.Join(dir, "m"), "--id", "bundle.many", "--created", "2026-06-19T12:00:00Z"); res.code != 0 {
				t.Fatalf("seal: %s", res.stderr)
			}
			d := runOne(t, dir, 0).Pipelines[0].Destinations[0]
			if d.Action != "publish_new" || d.Status != "ok" || d.Counts.Created != n {
				t.Fatalf("run: %+v", d)
			}
			got := be.objects(t)
			if _, ok := got[".distributor.journal"]; ok || len(got) != n+1 {
				t.Errorf("%d objects (want %d files and the catalog, no journal): %v", len(got), n, keys(got)[:min(5, len(got))])
			}
		})
	}
}
