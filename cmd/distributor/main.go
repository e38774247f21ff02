// Command distributor publishes source bundles to local disk, SFTP servers
// and object stores under a catalog: the command line over the library,
// linking every backend. See README.md and docs/.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/distributor-dev/distributor/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := notifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	v, commit := buildVersion()
	code := cli.Execute(ctx, os.Args[1:], cli.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		Version: v, Commit: commit, IsTerminal: isTerminal, TerminalWidth: terminalWidth,
	})
	var ie *interruptedError
	if code != cli.ExitOK && errors.As(context.Cause(ctx), &ie) {
		// The signal stopped the run (after its bounded cleanup): say so,
		// with the shell's status for a process that signal ended.
		fmt.Fprintf(os.Stderr, "distributor: %v: stopped\n", ie)
		return ie.exitCode()
	}
	return code
}

// interruptedError is the cause of the run's context when a signal ended it.
type interruptedError struct{ sig os.Signal }

func (e *interruptedError) Error() string {
	return "interrupted by " + signalName(e.sig)
}

// exitCode is 128 plus the signal's number, as a shell reports a process
// that the signal killed.
func (e *interruptedError) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return cli.ExitFailed
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// signalGrace is how long a run may wind down after the first signal
// before the process exits regardless (see notifyContext). The run's own
// cleanup after an interruption stops sooner (txn.InterruptedCleanup);
// this catches whatever else waits on a server that stopped answering.
// docs/operations.md promises that a signal ends a run within 5 seconds.
const signalGrace = 4500 * time.Millisecond

// notifyContext returns a context that the first of the signals cancels,
// with an *interruptedError as the cause. That signal restores the default
// handling (a second one ends the process at once) and arms an exit
// signalGrace later. stop releases the signals and cancels the context.
func notifyContext(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	var grace atomic.Pointer[time.Timer]
	go func() {
		select {
		case sig := <-ch:
			// Default handling first: from the moment the run starts to
			// wind down, another signal kills it.
			signal.Stop(ch)
			ie := &interruptedError{sig: sig}
			cancel(ie)
			grace.Store(time.AfterFunc(signalGrace, func() {
				fmt.Fprintf(os.Stderr, "distributor: %v: the run did not stop within %v; exiting: what it did not settle "+
					"stays in the root's intent journal (and lock), which the next run recovers\n", ie, signalGrace)
				os.Exit(ie.exitCode())
			}))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
		if t := grace.Load(); t != nil {
			t.Stop() // the run ended by itself: its status stands
		}
	}
}

// buildVersion reports the module version ("dev" when unknown) and VCS revision.
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
	return cmp.Or(v, "dev"), commit
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
