// Command distributor publishes source bundles to local disk, SFTP servers
// and S3-compatible storage under a catalog that records what it manages.
// See README.md and docs/ for the full story.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/distributor-dev/distributor/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() {
	os.Exit(run())
}

// defaultMemoryLimit is the Go runtime's soft memory limit unless GOMEMLIMIT
// says otherwise: the garbage collector works harder as the heap nears it,
// which keeps a run over a root of 100,000 managed outputs under about
// 300 MB instead of letting the heap double its live size. It is soft: a
// run that needs more gets more, with the collector's CPU share capped.
// GOMEMLIMIT=off restores the runtime's default.
const defaultMemoryLimit = 256 << 20

func run() int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	v, commit := buildVersion()
	return cli.Execute(ctx, os.Args[1:], cli.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		Version: v, Commit: commit, IsTerminal: isTerminal,
	})
}

// buildVersion reports the module version and VCS revision the binary was
// built from, falling back to "dev".
func buildVersion() (string, string) {
	v, commit := version, ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	return v, commit
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
