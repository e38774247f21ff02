// Package distributor publishes source bundles (a directory of reports with
// a manifest.json) to local disk, SFTP servers and object stores, and keeps
// at each destination root a catalog, .distributor.json, of every path it
// manages, so that it never overwrites or deletes what it does not own.
// The command line distributor is one client of this package; a report
// producer written in Go is another, without a subprocess.
//
// A program loads a configuration (the YAML file the command line reads,
// described in the project's README), then calls one function per command:
//
//	cfg, err := distributor.LoadConfig("distributor.yaml")
//	if err != nil {
//		return err // a *ConfigFileError lists every problem with its line
//	}
//	rep, err := distributor.Run(ctx, cfg, distributor.RunOptions{
//		Pipelines: []string{"weather.daily"},
//		Logger:    slog.Default(),
//	})
//	if err != nil {
//		return err // options that do not fit the configuration
//	}
//	if rep.Failed() {
//		// a destination failed: rep says which and why
//	}
//
// Each function returns the document the matching command prints with
// --output json (RunReport, PruneReport, ...; docs/cli.md): everything that
// happened, failures included. The error is only for a call that could not
// start: options that do not fit (*UsageError, *ConfigError), or a
// maintenance command's root that could not be opened.
//
// Nothing here prints, reads flags or keeps global state beyond the linked
// backends. Logs go to the options' Logger (none when nil), progress to
// OnEvent. Cancelling the context stops the work at the next safe point,
// leaving every root truthful (docs/operations.md, as for a signal).
//
// # Backends
//
// Local disk is always linked. Every other backend is a package that a
// program imports for its side effect, as a database/sql driver:
//
//	import _ "github.com/distributor-dev/distributor/backend/s3"
//
// (backend/sftp, s3, gcs, azure, ftp, or backend/all as the command line does).
// A program that imports none links no cloud SDK nor SSH code; a destination
// whose backend is not linked is a configuration problem.
package distributor

import (
	"cmp"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
)

// Config is a loaded and validated configuration: pipelines, destinations
// and notifications. It is read-only and safe to share between calls.
type Config struct {
	c      *config.Config
	getenv func(string) string
}

// ConfigFileError is a configuration that failed validation: its Problems
// each name the file, line and field.
type ConfigFileError = config.Error

// UsageError is a call whose options do not fit together or the
// configuration (an unknown pipeline, --force without a destination): exit 2.
type UsageError = app.UsageError

// ConfigError is a configuration that cannot serve the requested command,
// such as Prune without a retention.prune policy (exit status 2).
type ConfigError = app.ConfigError

// LockHeldError is a destination root locked by another live writer past
// the lock timeout (the command line's exit status 11: try again later).
type LockHeldError = lock.HeldError

// DefaultConfigFile is the configuration file's name when none is given.
const DefaultConfigFile = config.DefaultFile

// LoadConfig reads and validates the configuration file at path; ${VAR}
// and the backends' credentials read the process environment.
func LoadConfig(path string) (*Config, error) { return LoadConfigEnv(path, os.Getenv) }

// LoadConfigEnv is LoadConfig with the environment (${VAR}, webhook secrets,
// backend credentials) read through getenv.
func LoadConfigEnv(path string, getenv func(string) string) (*Config, error) {
	c, err := config.LoadEnv(path, getenv)
	if err != nil {
		return nil, err
	}
	return &Config{c: c, getenv: getenv}, nil
}

// ParseConfig validates a configuration held in memory, as if it were the
// file distributor.yaml in dir: relative paths in it resolve against dir,
// and messages name that file.
func ParseConfig(data []byte, dir string) (*Config, error) {
	c, err := config.DecodeEnv(data, filepath.Join(dir, config.DefaultFile), os.Getenv)
	if err != nil {
		return nil, err
	}
	return &Config{c: c, getenv: os.Getenv}, nil
}

// File is the configuration file's absolute path.
func (c *Config) File() string { return c.c.File }

// MetricsFile is the configured metrics_file, or "".
func (c *Config) MetricsFile() string { return c.c.MetricsFile }

// Pipeline is one pipeline of a configuration as a caller sees it.
type Pipeline struct {
	ID           string
	Source       string   // the bundle directory, absolute
	Destinations []string // destination ids, in the configuration's order
}

// Pipelines lists the configuration's pipelines in its order.
func (c *Config) Pipelines() []Pipeline {
	out := make([]Pipeline, len(c.c.Pipelines))
	for i, p := range c.c.Pipelines {
		out[i] = Pipeline{ID: p.ID, Source: p.Source, Destinations: append([]string(nil), p.Destinations...)}
	}
	return out
}

// Destination is one destination of a configuration as a caller sees it.
type Destination struct {
	ID       string
	Backend  string // local, sftp, s3, gcs, azure or ftp
	Path     string // the root as configured, {source_*} placeholders unexpanded
	Workflow string // additive or replacement
}

// Destinations lists the configuration's destinations in its order.
func (c *Config) Destinations() []Destination {
	out := make([]Destination, len(c.c.Destinations))
	for i, d := range c.c.Destinations {
		out[i] = Destination{ID: d.ID, Backend: d.Backend, Path: d.Path, Workflow: d.Workflow}
	}
	return out
}

// Event is progress (OnEvent): EventStart begins a task, such as a run's
// writes to one destination (Files and Bytes: how much it will do),
// EventDone reports one output written or checked (Path, Bytes), and
// EventFinish ends it, whatever happened.
type Event = app.Event

// EventKind says what an Event reports.
type EventKind = app.EventKind

// The events of a task, in the order they come.
const (
	EventStart  = app.EventStart
	EventDone   = app.EventDone
	EventFinish = app.EventFinish
)

// Tuning holds what a program rarely sets (the lock's timeout, lease and
// skew allowance; the version documents record); its zero value is the defaults.
type Tuning = app.Tuning

func session(cfg *Config, logger *slog.Logger, onEvent func(Event), t Tuning) *app.App {
	t.Version = cmp.Or(t.Version, moduleVersion())
	a := app.New(t.Version, logger)
	if cfg != nil && cfg.getenv != nil {
		a.Getenv = cfg.getenv
	}
	a.Tuning = t
	a.OnEvent = onEvent
	return a
}

// moduleVersion is this module's version in the build information:
// "(devel)" inside this repository, a tag in a program requiring it, or "dev".
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	const path = "github.com/distributor-dev/distributor"
	if bi.Main.Path == path {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == path {
			return m.Version
		}
	}
	return "dev"
}

// The lock's default timing (Tuning's zero values).
const (
	DefaultLockLease         = lock.DefaultLease
	DefaultLockSkewAllowance = lock.DefaultSkewAllowance
)
