package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/distributor-dev/distributor/internal/cli"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

// Messages name what to do (issue 22): each test sets up the situation an
// operator meets and checks that the message names the path, field or
// user involved and the next step, without the system calls or parser
// wording underneath.

// execEnv runs the CLI in-process with the environment env, returning the
// exit status, stdout and stderr.
func execEnv(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(context.Background(), args, wide(cli.Env{Stdout: &stdout, Stderr: &stderr, Version: "test",
		Getenv: func(k string) string { return env[k] }}))
	return code, stdout.String(), stderr.String()
}

// failedLine returns the FAILED line of a text report (the first line of a
// multi-line message).
func failedLine(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "FAILED: "); ok {
			return s
		}
	}
	t.Fatalf("no FAILED line in:\n%s", out)
	return ""
}

func TestMessageRootIsAFile(t *testing.T) {
	w := newHostileWS(t, false)
	w.write(t, "www", "not a directory\n")
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	want := fmt.Sprintf("local %s: the configured root is a regular file, not a directory: set the destination's path to a directory (a missing one is created), or move the file out of the way", w.root)
	if got := failedLine(t, out); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestMessageDryRunValue(t *testing.T) {
	w := newHostileWS(t, false)
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf, "--dry-run=maybe")
	want := `distributor: --dry-run takes true or false, not "maybe" (--dry-run alone means true) (see 'distributor run --help')` + "\n"
	if code != 2 || errs != want {
		t.Errorf("exit %d, stderr %q\nwant exit 2, stderr %q (stdout %q)", code, errs, want, out)
	}
}

func TestMessageRenameDidYouMean(t *testing.T) {
	w := newHostileWS(t, false)
	w.editConfig(t, "rename: {report.md: index.md}", "rename: {reprot.md: index.md}")
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf, "--dry-run")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	want := `paths.rename (config line 12): "reprot.md" is not a file of the bundle; did you mean "report.md"?`
	if got := failedLine(t, out); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// An invalid catalog names the line and column of the bad value, and the
// choices: restore (then reconcile-state), repair, or --force after a dry
// run, whose deletes include the unmanaged robots.txt.
func TestMessageInvalidCatalogChoices(t *testing.T) {
	w := newHostileWS(t, true) // published, with an unmanaged robots.txt
	cat := filepath.Join(w.root, ".distributor.json")
	data, err := os.ReadFile(cat)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"size": `))
	if i < 0 {
		t.Fatalf("no size in the catalog:\n%s", data)
	}
	line := bytes.Count(data[:i], []byte("\n")) + 1
	col := i - bytes.LastIndexByte(data[:i], '\n') + len(`"size": `)
	end := i + len(`"size": `) + bytes.IndexAny(data[i+len(`"size": `):], ",\n")
	bad := append(append(append([]byte{}, data[:i+len(`"size": `)]...), '"'), data[i+len(`"size": `):end]...)
	bad = append(append(bad, '"'), data[end:]...)
	if err := os.WriteFile(cat, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		fmt.Sprintf("FAILED: destination state (.distributor.json) is invalid: decode catalog: line %d, column %d: outputs[0].size: must be an integer, got a string\n", line, col),
		"- restore .distributor.json from a backup, then run `distributor reconcile-state --pipeline reports --destination site` to drop the records of files deleted since (reconcile-state refuses the invalid one)\n",
		"- or repair the value named above by hand\n",
		"- or replace the root: `distributor run --pipeline reports --destination site --force --dry-run` lists what --force deletes, which includes the 1 file(s) here that no catalog records: robots.txt; move those aside, then run it without --dry-run\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	// What the choices say of --force is true: its dry run deletes
	// robots.txt.
	if _, out, _ := execEnv(t, nil, "run", "--config", w.conf, "--pipeline", "reports", "--destination", "site", "--force", "--dry-run"); !strings.Contains(out, "delete     robots.txt") {
		t.Errorf("the forced dry run does not delete robots.txt:\n%s", out)
	}
	code, out, _ = execEnv(t, nil, "reconcile-state", "--config", w.conf, "--pipeline", "reports", "--destination", "site")
	if code != 1 || !strings.Contains(out, "reconcile-state never rewrites invalid state\n") || !strings.Contains(out, "- restore .distributor.json from a backup") {
		t.Errorf("reconcile-state: exit %d\n%s", code, out)
	}
}

// A root that this user cannot write to names the root, the user and the
// access missing. The tests run as root, which no permission stops: the
// binary then runs as nobody (setpriv); as any other user the root is
// made read-only.
func TestMessageUnwritableRoot(t *testing.T) {
	w := newHostileWS(t, false)
	if err := os.Mkdir(w.root, 0o555); err != nil {
		t.Fatal(err)
	}
	var got, name string
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root and setpriv is not installed: no way to run as an unprivileged user")
		}
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("running as root and there is no user nobody: %v", err)
		}
		name = "nobody"
		exe := copyExecutable(t)
		// nobody must reach the workspace and the binary.
		for _, d := range []string{w.dir, filepath.Dir(w.dir), filepath.Dir(exe), filepath.Dir(filepath.Dir(exe))} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// JSON: the text report on a pipe wraps at 80 columns.
		cmd := exec.Command(setpriv, "--reuid="+nobody.Uid, "--regid="+nobody.Gid, "--clear-groups", exe, "run", "--config", w.conf, "--output", "json")
		cmd.Env = append(os.Environ(), "DISTRIBUTOR_TEST_AS_MAIN=1", "DISTRIBUTOR_CONFIG=")
		out, _ := cmd.Output()
		got = destinationError(t, out)
	} else {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		name = u.Username
		_, out, _ := execEnv(t, nil, "run", "--config", w.conf)
		got = failedLine(t, out)
	}
	want := fmt.Sprintf("create .distributor.lock: local %s: put-if .distributor.lock: permission denied: user %s (uid ", w.root, name)
	wantEnd := fmt.Sprintf(") lacks write and search (w and x) permission on the directory %s; grant it (chown or chmod) or run distributor as a user that has it", w.root)
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, wantEnd) {
		t.Errorf("got  %s\nwant %s<uid>%s", got, want, wantEnd)
	}
}

// copyExecutable copies the test binary (the CLI with
// DISTRIBUTOR_TEST_AS_MAIN=1) where another user can run it.
func copyExecutable(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "distributor")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// closedPort returns a 127.0.0.1 address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A network failure is one line of at most report.BriefMax bytes naming
// the endpoint, the cause and what to do; --output json has it as error
// and the whole chain as error_detail.
func TestMessageNetworkFailure(t *testing.T) {
	w := newHostileWS(t, false)
	addr := closedPort(t)
	host, port, _ := net.SplitHostPort(addr)
	key := filepath.Join(w.dir, "id_ed25519")
	writeSSHKey(t, key)
	w.write(t, "known_hosts", "")
	cases := []struct {
		name, block string
		// detail is in the whole error, not in the brief one.
		detail string
		// want is the brief message, exactly.
		want string
	}{
		{"s3, retries exhausted", fmt.Sprintf("    backend: s3\n    s3: {bucket: reports, region: us-east-1, endpoint: \"http://%s\", path_style: true}\n", addr),
			fmt.Sprintf(`Get "http://%s/reports/www/.distributor.json"`, addr),
			fmt.Sprintf("s3://reports/www: read .distributor.json: dial tcp %s: connect: connection refused (gave up after 4 attempts); check that %s is up and reachable from here, then rerun (-v or --output json: the whole error)", addr, addr)},
		{"sftp", fmt.Sprintf("    backend: sftp\n    sftp: {host: %s, port: %s, user: publisher, identity_file: %s, known_hosts_file: %s}\n", host, port, key, filepath.Join(w.dir, "known_hosts")),
			"",
			fmt.Sprintf("sftp://publisher@%s/www: connect: dial tcp %s: connect: connection refused; check that %s is up and reachable from here, then rerun (-v or --output json: the whole error)", addr, addr, addr)},
	}
	env := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conf := strings.Replace(hostileConfig, "    backend: local\n    path: www\n", c.block+"    path: www\n", 1)
			if strings.HasPrefix(c.name, "sftp") {
				conf = strings.Replace(conf, "path: www", "path: /www", 1)
			}
			w.write(t, "distributor.yaml", conf)
			code, out, errs := execEnv(t, env, "run", "--config", w.conf)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
			}
			got := failedLine(t, out)
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if len(got) > report.BriefMax {
				t.Errorf("the message is %d bytes, more than %d", len(got), report.BriefMax)
			}
			// The log line at the default level is the brief one too.
			if !strings.Contains(errs, fmt.Sprintf("err=%q", c.want)) {
				t.Errorf("stderr lacks the brief error:\n%s", errs)
			}
			_, js, _ := execEnv(t, env, "run", "--config", w.conf, "--output", "json")
			var doc struct {
				Pipelines []struct {
					Destinations []struct {
						Error       *string `json:"error"`
						ErrorDetail *string `json:"error_detail"`
					} `json:"destinations"`
				} `json:"pipelines"`
			}
			if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Pipelines) != 1 || len(doc.Pipelines[0].Destinations) != 1 {
				t.Fatalf("json: %v\n%s", err, js)
			}
			d := doc.Pipelines[0].Destinations[0]
			if d.Error == nil || *d.Error != c.want {
				t.Errorf("json error = %v, want %q", d.Error, c.want)
			}
			if d.ErrorDetail == nil || !strings.Contains(*d.ErrorDetail, "connection refused") || !strings.Contains(*d.ErrorDetail, c.detail) ||
				strings.Contains(*d.ErrorDetail, "check that") {
				t.Errorf("json error_detail = %v, want the whole error with %q", d.ErrorDetail, c.detail)
			}
			// -v logs the whole error.
			if _, _, verr := execEnv(t, env, "run", "--config", w.conf, "-v"); !strings.Contains(verr, "the whole error") || !strings.Contains(verr, "connection refused") {
				t.Errorf("-v does not log the whole error:\n%s", verr)
			}
		})
	}
}

// writeSSHKey writes an unencrypted OpenSSH private key to path and
// returns its public key.
func writeSSHKey(t *testing.T, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// unlock that cannot read the lock says why, in brief, instead of "not
// locked: nothing to do" with exit status 1.
func TestMessageUnlockUnreachable(t *testing.T) {
	w := newHostileWS(t, false)
	addr := closedPort(t)
	w.editConfig(t, "    backend: local\n", fmt.Sprintf("    backend: s3\n    s3: {bucket: reports, region: us-east-1, endpoint: \"http://%s\", path_style: true}\n", addr))
	env := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	code, out, errs := execEnv(t, env, "unlock", "--config", w.conf, "--pipeline", "reports", "--destination", "site")
	want := fmt.Sprintf("read .distributor.lock: s3://reports/www: get .distributor.lock: dial tcp %s: connect: connection refused (gave up after 4 attempts); check that %s is up and reachable from here, then rerun (-v or --output json: the whole error)", addr, addr)
	if code != 1 || strings.Contains(out, "not locked") || failedLine(t, out) != want {
		t.Errorf("exit %d\n%s%s\nwant exit 1 and FAILED: %s", code, out, errs, want)
	}
}

// --config naming a directory says so and names the file to give, instead
// of read's "is a directory".
func TestMessageConfigIsADirectory(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := execEnv(t, nil, "run", "--config", dir)
	want := fmt.Sprintf("distributor: %s (from --config) is a directory, not a configuration file: name the file (e.g. %s)\n", dir, filepath.Join(dir, "distributor.yaml"))
	if code != 2 || errs != want {
		t.Errorf("exit %d, stderr %q\nwant exit 2, stderr %q (stdout %q)", code, errs, want, out)
	}
}

// A store's error names the root and the file once (the catalog read adds
// neither again): a bucket that does not exist on versitygw.
func TestMessageRootNamedOnce(t *testing.T) {
	srv := s3test.Versitygw(t)
	w := newHostileWS(t, false)
	w.editConfig(t, "    backend: local\n", fmt.Sprintf("    backend: s3\n    s3: {bucket: no-such-bucket, region: %s, endpoint: %q, path_style: true}\n", srv.Region, srv.URL))
	code, out, errs := execEnv(t, srv.Env, "run", "--config", w.conf)
	want := "s3://no-such-bucket/www: read .distributor.json: NoSuchBucket: The specified bucket does not exist. (HTTP 404); the bucket does not exist"
	if code != 1 || failedLine(t, out) != want {
		t.Errorf("exit %d\n%s%s\nwant exit 1 and FAILED: %s", code, out, errs, want)
	}
}

// GCS without credentials (no anonymous, no GOOGLE_APPLICATION_CREDENTIALS,
// no gcloud file, no metadata server) says that none was found, what was
// tried and how to give one, in one attempt, instead of a network hint.
// The metadata server is a closed port on 127.0.0.1 (GCE_METADATA_HOST,
// which the metadata client reads from the process environment), and so
// is the API: nothing leaves loopback.
func TestMessageGCSNoCredentials(t *testing.T) {
	w := newHostileWS(t, false)
	home, metadata := t.TempDir(), closedPort(t)
	t.Setenv("GCE_METADATA_HOST", metadata)
	w.editConfig(t, "    backend: local\n", fmt.Sprintf("    backend: gcs\n    gcs: {bucket: reports, endpoint: \"http://%s\"}\n", closedPort(t)))
	code, out, errs := execEnv(t, map[string]string{"HOME": home, "GCE_METADATA_HOST": metadata}, "run", "--config", w.conf)
	want := fmt.Sprintf("gs://reports/www: read .distributor.json: no Google credentials found (tried GOOGLE_APPLICATION_CREDENTIALS: not set; "+
		"no gcloud file %s; the metadata server %s: dial tcp %s: connect: connection refused): "+
		"set GOOGLE_APPLICATION_CREDENTIALS to a credentials file, run `gcloud auth application-default login`, or set anonymous: true for an emulator",
		filepath.Join(home, ".config", "gcloud", "application_default_credentials.json"), metadata, metadata)
	if code != 1 || failedLine(t, out) != want {
		t.Errorf("exit %d\n%s%s\nwant exit 1 and FAILED: %s", code, out, errs, want)
	}
	if strings.Contains(errs, "retrying") {
		t.Errorf("a missing credential was retried:\n%s", errs)
	}
}

// Azure on Azurite's http:// endpoint with no connection string, key or
// SAS says that no credential was found and what was tried, instead of the
// SDK's refusal to send a token over http (the https:// case:
// azure.TestNoCredentialHTTPS).
func TestMessageAzureNoCredential(t *testing.T) {
	srv := azuretest.Azurite(t)
	w := newHostileWS(t, false)
	w.editConfig(t, "    backend: local\n", fmt.Sprintf("    backend: azure\n    azure: {account: %s, container: %s, endpoint: %q}\n", srv.Account, srv.Container, srv.Endpoint))
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf)
	want := fmt.Sprintf("azure://%s/%s/www: no Azure credential found (tried AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY and AZURE_STORAGE_SAS_TOKEN: not set; "+
		"Microsoft Entra ID: not used with an http:// endpoint, whose requests would carry its token unencrypted): "+
		"set AZURE_STORAGE_KEY (Azurite: its account key), AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_CONNECTION_STRING, or use an https:// endpoint (see docs/backends.md)",
		srv.Account, srv.Container)
	if code != 1 || failedLine(t, out) != want {
		t.Errorf("exit %d\n%s%s\nwant exit 1 and FAILED: %s", code, out, errs, want)
	}
}

// sftpBlock is the backend fields of an sftp destination at addr, without
// its path.
func sftpBlock(t *testing.T, addr, user, key, knownHosts, extra string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("    backend: sftp\n    sftp: {host: %s, port: %s, user: %s, identity_file: %s, known_hosts_file: %s%s}\n", host, port, user, key, knownHosts, extra)
}

// An SSH login that the server refuses (OpenSSH's sshd of
// scripts/test-servers, offered a key it does not know) names the login,
// the key and agent offered and what to do, in the style of the
// known_hosts message, once (not retried).
func TestMessageSSHLoginRefused(t *testing.T) {
	l := sftptest.SSHD(t).FreshRoot(t)
	w := newHostileWS(t, false)
	key := filepath.Join(w.dir, "id_ed25519")
	pub := writeSSHKey(t, key)
	addr := net.JoinHostPort(l.Host, fmt.Sprint(l.Port))
	w.write(t, "distributor.yaml", strings.Replace(hostileConfig, "    backend: local\n    path: www\n",
		sftpBlock(t, addr, l.User, key, l.KnownHosts, "")+"    path: "+l.Root+"\n", 1))
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf)
	want := fmt.Sprintf("sftp://%[1]s@%[2]s%[3]s: connect: login as %[1]s@%[2]s refused: the server accepted none of the keys offered "+
		"(identity_file %[4]s, ssh-ed25519 %[5]s; no ssh agent: SSH_AUTH_SOCK is not set); add the public key to ~/.ssh/authorized_keys of %[1]s "+
		"on the server (ssh-keygen -y -f %[4]s prints it), or set identity_file to a key it accepts", l.User, addr, l.Root, key, ssh.FingerprintSHA256(pub))
	if code != 1 || failedLine(t, out) != want {
		t.Errorf("exit %d\n%s%s\nwant exit 1 and FAILED: %s", code, out, errs, want)
	}
	if strings.Contains(errs, "retrying") {
		t.Errorf("a refused login was retried:\n%s", errs)
	}
}

// A server that accepts the TCP connection and never speaks fails the
// dial within sftp.dial_timeout, saying so in one line that names the
// address and the check to make (no "i/o timeout" of the read cut short).
func TestMessageSSHNoGreeting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // held open, silent
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	w := newHostileWS(t, false)
	key := filepath.Join(w.dir, "id_ed25519")
	writeSSHKey(t, key)
	w.write(t, "known_hosts", "")
	addr := ln.Addr().String()
	w.write(t, "distributor.yaml", strings.Replace(hostileConfig, "    backend: local\n    path: www\n",
		sftpBlock(t, addr, "publisher", key, filepath.Join(w.dir, "known_hosts"), ", dial_timeout: 1s")+"    path: /www\n", 1))
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf, "--output", "json")
	want := fmt.Sprintf("sftp://publisher@%[1]s/www: connect: SSH handshake with %[1]s: the server accepted the connection but sent no SSH greeting "+
		"within 1s (dial timeout); check that %[1]s is an SSH server", addr)
	var doc runDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Pipelines) != 1 || len(doc.Pipelines[0].Destinations) != 1 {
		t.Fatalf("exit %d, json: %v\n%s%s", code, err, out, errs)
	}
	if got := doc.Pipelines[0].Destinations[0].Error; code != 1 || got == nil || *got != want {
		t.Errorf("exit %d, error %v\nwant exit 1 and error %s", code, got, want)
	}
}
