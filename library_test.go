package distributor_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor"
)

// goTool runs the go command in dir and returns its stdout; stderr is
// reported on failure.
func goTool(t *testing.T, dir string, env []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// TestLibraryLinksNoRemoteBackend: a program that imports only the
// library links no cloud SDK, no SSH and no FTP code, and none of the
// remote backends' own packages; importing a backend's package links it.
func TestLibraryLinksNoRemoteBackend(t *testing.T) {
	forbidden := []string{"github.com/Azure/", "github.com/minio/", "github.com/pkg/sftp", "golang.org/x/crypto/ssh",
		"golang.org/x/oauth2", "cloud.google.com/", "github.com/jlaffaye/ftp",
		"/internal/storage/sftp", "/internal/storage/s3", "/internal/storage/gcs", "/internal/storage/azure", "/internal/storage/ftp"}
	deps, _ := goTool(t, ".", nil, "list", "-deps", "github.com/distributor-dev/distributor")
	for _, dep := range strings.Fields(deps) {
		for _, f := range forbidden {
			if strings.Contains(dep, f) {
				t.Errorf("the library links %s", dep)
			}
		}
	}
	deps, _ = goTool(t, ".", nil, "list", "-deps", "github.com/distributor-dev/distributor/backend/sftp")
	if !strings.Contains(deps, "github.com/pkg/sftp\n") {
		t.Errorf("backend/sftp does not link github.com/pkg/sftp:\n%s", deps)
	}
}

// producer is a program outside this repository that publishes with the
// library: a dry run, a publish and a rerun, printing only each action.
const producer = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/distributor-dev/distributor"
)

func main() {
	cfg, err := distributor.LoadConfig(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, dry := range []bool{true, false, false} {
		rep, err := distributor.Run(context.Background(), cfg, distributor.RunOptions{DryRun: dry})
		if err != nil || rep.Failed() {
			fmt.Fprintln(os.Stderr, "failed:", err)
			os.Exit(1)
		}
		fmt.Println(rep.Pipelines[0].Destinations[0].Action)
	}
}
`

// TestProgramOutsideTheRepository builds a module of its own that requires
// this one (replaced by this checkout) and imports only the library, runs
// it on a bundle and a configuration, and finds publish_new, publish_new,
// skip_same on its stdout, nothing else there or on stderr, and the files
// published.
func TestProgramOutsideTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (-short)")
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "producer")
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/producer\n\ngo 1.26\n\nrequire github.com/distributor-dev/distributor v0.0.0\n\n" +
		"replace github.com/distributor-dev/distributor => " + repo + "\n"
	write(t, filepath.Join(prog, "go.mod"), gomod)
	write(t, filepath.Join(prog, "go.sum"), string(sum))
	write(t, filepath.Join(prog, "main.go"), producer)
	bundle := filepath.Join(dir, "out")
	write(t, filepath.Join(bundle, "report.md"), "# Today\n")
	write(t, filepath.Join(dir, "distributor.yaml"), "pipelines:\n  - {id: daily, source: out, destinations: [site]}\n"+
		"destinations:\n  - {id: site, backend: local, path: public}\n")
	// The module's own requirements resolve from the module cache the
	// repository's build filled: no network.
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}
	goTool(t, prog, env, "mod", "tidy")
	goTool(t, repo, nil, "run", "./cmd/distributor", "bundle", "seal", bundle, "--id", "daily.1", "-q")
	stdout, stderr := goTool(t, prog, env, "run", ".", filepath.Join(dir, "distributor.yaml"))
	if want := "publish_new\npublish_new\nskip_same\n"; stdout != want || stderr != "" {
		t.Errorf("stdout %q, stderr %q; want stdout %q and no stderr", stdout, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "public", "report.html")); err != nil {
		t.Errorf("not published: %v", err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnlinkedBackend: a destination on a backend this program did not
// link is refused with the import that links it, and its block is not
// reported as an unknown field.
func TestUnlinkedBackend(t *testing.T) {
	_, err := distributor.ParseConfig([]byte("pipelines:\n  - {id: p, source: out, destinations: [d]}\n"+
		"destinations:\n  - id: d\n    backend: s3\n    path: reports\n    s3: {bucket: reports}\n"), t.TempDir())
	want := `distributor.yaml:5: destinations[0].backend: backend s3 is not linked into this program: ` +
		`import _ "github.com/distributor-dev/distributor/backend/s3" (linked: local)`
	if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("err = %v\nwant one problem ending %s", err, want)
	}
}
