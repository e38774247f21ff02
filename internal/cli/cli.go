// Package cli is distributor's command line: each command parses flags into
// options, makes one call into the library and renders the document it
// returns as text or JSON.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	// The command line links every backend (see package registry).
	"github.com/distributor-dev/distributor"
	_ "github.com/distributor-dev/distributor/backend/all"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
)

// Exit statuses (spec section 7).
const (
	ExitOK     = 0
	ExitFailed = 1 // a destination failed, a plan has a fail_* action, a bundle is invalid, verify found problems
	ExitUsage  = 2 // a usage or configuration error
	// ExitLocked: the only failures were roots locked by another writer
	// past --lock-timeout (restic uses 11 for its locked repository).
	ExitLocked  = 11
	exitUnknown = 1
)

// Env is the process environment the CLI runs in. Nothing is read from
// globals, so tests run the CLI in-process.
type Env struct {
	Stdout     io.Writer
	Stderr     io.Writer
	Getenv     func(string) string
	Version    string // module version, e.g. "v0.1.0" or "dev"
	Commit     string // VCS revision, or ""
	IsTerminal func(io.Writer) bool
	// TerminalWidth reports a terminal writer's columns, or 0 (help then reads $COLUMNS); nil: 0.
	TerminalWidth func(io.Writer) int
}

// exitError carries an exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// errSilentFailure and errLockHeld make a command that printed its own
// report exit 1 or ExitLocked.
var (
	errSilentFailure = &exitError{code: ExitFailed, err: errors.New("")}
	errLockHeld      = &exitError{code: ExitLocked, err: errors.New("")}
)

// globals are the persistent flags.
type globals struct {
	env        Env
	stdout     *countingWriter // env.Stdout
	args       []string        // the command line (without the program name)
	configPath string          // the configuration file loadConfig resolved
	config     string
	output     string
	logLevel   string
	verbose    bool // -v: --log-level info
	quiet      bool // -q: --log-level error, and text reports only of failures
	progress   string
	lockWait   time.Duration
	lockLease  time.Duration // lockLease and lockSkew tune fencing (docs/design.md)
	lockSkew   time.Duration
	logger     *slog.Logger
	level      slog.Level // logger's
	columns    int        // the width help and text reports fit; 0 is defaultColumns
}

// Execute runs the CLI with args (no program name) and returns the exit status.
func Execute(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.IsTerminal == nil {
		env.IsTerminal = func(io.Writer) bool { return false }
	}
	columns := helpColumns(env)
	stdout := &countingWriter{w: env.Stdout}
	env.Stdout = stdout
	g := &globals{env: env, args: args, columns: columns, stdout: stdout}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitUnknown
	var ee *exitError
	if errors.As(err, &ee) {
		brief := report.Brief(ee.err)
		if ee.err.Error() != "" {
			fmt.Fprintf(env.Stderr, "distributor: %s\n", brief)
		}
		if brief != ee.err.Error() && g.logger != nil {
			g.logger.Info("the whole error", "err", ee.err)
		}
		code = ee.code
	} else {
		// Errors from cobra itself (bad argument count) are usage errors.
		fmt.Fprintf(env.Stderr, "distributor: %v\n", err)
		if slices.ContainsFunc([]string{"unknown flag", "unknown shorthand", "unknown command", "accepts ", "requires at least", "flag needs an argument", "invalid argument",
			"required flag", "if any flags in the group", "none of the others can be"}, func(s string) bool { return strings.Contains(err.Error(), s) }) {
			fmt.Fprintf(env.Stderr, "Run 'distributor --help' for usage.\n")
			code = ExitUsage
		}
	}
	// --output json promises one document on stdout, also when the command
	// failed before it could print its own.
	if stdout.n == 0 && wantsJSON(g.output, args) {
		if perr := g.printJSON(errorDocument(root, args, code, err)); perr != nil {
			fmt.Fprintf(env.Stderr, "distributor: %v\n", perr)
		}
	}
	return code
}

// countingWriter counts bytes written, so Execute knows whether a command
// printed its document, and keeps the last (state show ends its line).
type countingWriter struct {
	w    io.Writer
	n    int64
	last byte
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if n > 0 {
		c.last = p[n-1]
	}
	return n, err
}

// ErrorDocument is what --output json prints for a command that fails before it
// has a document of its own (docs/cli.md, "JSON output").
type ErrorDocument struct {
	Command string `json:"command"` // as typed after "distributor", e.g. "bundle seal"
	// Error is the message also printed on stderr (a network failure in
	// brief); ErrorDetail is the whole error with every cause.
	Error       string   `json:"error"`
	ErrorDetail string   `json:"error_detail"`
	ExitStatus  int      `json:"exit_status"` // 2 for a usage or configuration error, 1 otherwise
	Problems    []string `json:"problems"`    // an invalid configuration's config.Error.Messages
}

// errorDocument describes err, which made the command args name exit code.
func errorDocument(root *cobra.Command, args []string, code int, err error) ErrorDocument {
	doc := ErrorDocument{ExitStatus: code, Problems: configProblems(err)}
	if c, _, ferr := root.Find(args); ferr == nil && c != nil {
		doc.Command = strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
	}
	var ee *exitError
	if errors.As(err, &ee) {
		doc.Error, doc.ErrorDetail = report.Brief(ee.err), ee.err.Error()
	} else if err != nil {
		doc.Error, doc.ErrorDetail = err.Error(), err.Error()
	}
	return doc
}

// configProblems lists the problems of an invalid configuration, or none.
func configProblems(err error) []string {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return []string{}
	}
	return ce.Messages()
}

// wantsJSON reports whether the command line asked for --output json, also
// when parsing stopped before that flag was reached.
func wantsJSON(parsed string, args []string) bool {
	if parsed == "json" {
		return true
	}
	want := false
	for i, a := range args {
		switch {
		case a == "--":
			return want
		case a == "--output=json":
			want = true
		case strings.HasPrefix(a, "--output="):
			want = false
		case a == "--output" && i+1 < len(args):
			want = args[i+1] == "json"
		}
	}
	return want
}

var unknownFlagRE = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-{0,2}([^' ]+)'?`)

// flagHint suggests what a mistyped flag probably meant, or returns "".
func flagHint(c *cobra.Command, err error) string {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	name := m[1]
	if name == "json" || name == "text" {
		return "did you mean --output " + name + "?"
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := config.Closest(name, names); s != "" {
		return "did you mean --" + s + "?"
	}
	return ""
}

// flagValueMessage says what a flag given a value it cannot parse takes,
// without the parser's wording (strconv.ParseBool: ...), or returns "".
func flagValueMessage(err error) string {
	var ie *pflag.InvalidValueError
	if !errors.As(err, &ie) {
		return ""
	}
	f := ie.GetFlag()
	switch f.Value.Type() {
	case "bool":
		return fmt.Sprintf("--%s takes true or false, not %q (--%s alone means true)", f.Name, ie.GetValue(), f.Name)
	case "duration":
		return fmt.Sprintf("--%s takes a duration such as 90s, 2m or 1h30m, not %q", f.Name, ie.GetValue())
	case "int":
		return fmt.Sprintf("--%s takes a whole number, not %q", f.Name, ie.GetValue())
	}
	return ""
}

func newRoot(g *globals) *cobra.Command {
	version := versionString(g.env)
	root := &cobra.Command{
		Use:   "distributor",
		Short: "Publish report bundles to web servers and object stores, safely",
		Long: `distributor publishes source bundles (a directory with manifest.json) to local
disk, SFTP servers, S3-compatible storage, Google Cloud Storage and Azure Blob
Storage. It records every path it manages in the catalog .distributor.json at
each destination root and never overwrites or deletes content it does not
manage unless told to with --force.

The configuration is read from --config, else $DISTRIBUTOR_CONFIG, else
./distributor.yaml.`,
		Example: `  # Publish every pipeline of ./distributor.yaml
  distributor run

  # See what a run would do, as JSON, without writing anything
  distributor run --dry-run --output json

  # Write a manifest for a directory of reports, then check it
  distributor bundle seal ./out --id weather.tomorrow
  distributor bundle verify ./out`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.verbose || g.quiet {
				if g.verbose && g.quiet {
					return usageErr("-v (--verbose) and -q (--quiet) contradict each other: use one")
				}
				if cmd.Flags().Changed("log-level") {
					return usageErr("-v and -q set the log level: use them or --log-level, not both")
				}
				g.logLevel = "info"
				if g.quiet {
					g.logLevel = "error"
				}
			}
			return g.setup()
		},
	}
	root.SetVersionTemplate("distributor {{.Version}}\n")
	// Commands that group subcommands run only to refuse a mistyped one
	// (groupCommand): their usage shows just "distributor x [command]".
	// Flag descriptions are wrapped to the help's width.
	root.SetUsageTemplate(strings.NewReplacer(
		"Usage:{{if .Runnable}}", "Usage:{{if and .Runnable (not .HasAvailableSubCommands)}}",
		".LocalFlags.FlagUsages ", fmt.Sprintf(".LocalFlags.FlagUsagesWrapped %d ", g.width()),
		".InheritedFlags.FlagUsages ", fmt.Sprintf(".InheritedFlags.FlagUsagesWrapped %d ", g.width()),
	).Replace(root.UsageTemplate()))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := flagValueMessage(err)
		if msg == "" {
			msg = err.Error()
			if hint := flagHint(c, err); hint != "" {
				msg += "; " + hint
			}
		}
		return usageErr("%s (see '%s --help')", msg, c.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "configuration file (default $DISTRIBUTOR_CONFIG, else ./distributor.yaml)")
	pf.StringVar(&g.output, "output", "text", "output format: text or json (json prints one document on stdout)")
	pf.StringVar(&g.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error (info and debug log each destination's progress)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "log progress and details on stderr: --log-level info")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "log only errors on stderr (--log-level error), and print a command's text report only when it fails (exit status not 0); --output json is unchanged")
	pf.StringVar(&g.progress, "progress", "auto", "progress display on stderr: auto (only on a terminal), always or never")
	pf.DurationVar(&g.lockWait, "lock-timeout", 2*time.Minute, "how long a writing command waits for a destination root locked by another run; 0 fails at once")
	pf.DurationVar(&g.lockLease, "lock-lease", distributor.DefaultLockLease, "lease of the lock a writing command holds: renewed every quarter, and the writer stops changing the root if it could not renew for three quarters of it")
	pf.DurationVar(&g.lockSkew, "lock-skew-allowance", distributor.DefaultLockSkewAllowance, "how much longer than the holder's lease a waiting command watches a silent lock before it takes it over")
	root.AddCommand(newRunCmd(g), newValidateCmd(g), newBundleCmd(g), newPruneCmd(g), newReconcileCmd(g), newVerifyCmd(g), newStateCmd(g), newUnlockCmd(g), newConfigCmd(g), newVersionCmd(g), newCompletionCmd(g, root))
	root.SetHelpCommand(newHelpCmd(root))
	return groupCommand(g, root)
}

func (g *globals) setup() error {
	if g.output != "text" && g.output != "json" {
		return usageErr("--output %q: use text or json", g.output)
	}
	if g.lockLease != 0 && g.lockLease < 100*time.Millisecond {
		return usageErr("--lock-lease %s: use at least 100ms (0: the default)", g.lockLease)
	}
	if g.lockSkew < 0 {
		return usageErr("--lock-skew-allowance %s: use a duration of 0 or more", g.lockSkew)
	}
	if !slices.Contains([]string{"auto", "always", "never"}, g.progress) {
		return usageErr("--progress %q: use auto, always or never", g.progress)
	}
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError}
	level, ok := levels[strings.ToLower(g.logLevel)]
	if !ok {
		return usageErr("--log-level %q: use debug, info, warn or error", g.logLevel)
	}
	g.level = level
	g.logger = slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: level}))
	return nil
}

// loadConfig resolves and loads the configuration; any problem is exit 2.
// An invalid file's error wraps its *config.Error.
func (g *globals) loadConfig() (*distributor.Config, error) {
	path, err := config.Resolve(g.config, g.env.Getenv)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	g.configPath = path
	cfg, err := distributor.LoadConfigEnv(path, g.env.Getenv)
	if err != nil {
		where := path + " (the default without --config or $" + config.EnvConfig + ")"
		switch {
		case g.config != "":
			where = path + " (from --config)"
		case g.env.Getenv(config.EnvConfig) != "":
			where = path + " (from $" + config.EnvConfig + ")"
		}
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil, usageErr("%s is a directory, not a configuration file: name the file (e.g. %s)", where, filepath.Join(path, config.DefaultFile))
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageErr("configuration file %s does not exist: name one with --config FILE or $%s, "+
				"or write a starter configuration with 'distributor config init'", where, config.EnvConfig)
		}
		return nil, &exitError{code: ExitUsage, err: err}
	}
	return cfg, nil
}

// session is a command's logger, progress display as event callback (also
// carrying log lines and logging transfers at info), and lock timing.
func (g *globals) session() (*slog.Logger, func(distributor.Event), distributor.Tuning) {
	logger := g.logger
	// Bars on stderr for --progress always, or auto on a terminal whose TERM is not "dumb" (no color).
	var progress *progressDisplay
	if terminal := g.env.IsTerminal(g.env.Stderr) && g.env.Getenv("TERM") != "dumb"; g.progress == "always" || g.progress == "auto" && terminal {
		progress = &progressDisplay{out: g.env.Stderr, terminal: terminal}
		logger = progressLogger(g.level, progress)
	}
	if logger != nil && logger.Enabled(context.Background(), slog.LevelInfo) {
		if progress == nil {
			progress = &progressDisplay{}
		}
		progress.log = logger
	}
	t := distributor.Tuning{LockTimeout: g.lockWait, LockLease: g.lockLease, LockSkewAllowance: g.lockSkew, Version: g.env.Version}
	if g.lockWait == 0 {
		t.LockTimeout = -1 // do not wait
	}
	if progress == nil {
		return logger, nil, t
	}
	return logger, progress.event, t
}

func (g *globals) printJSON(v any) error {
	enc := json.NewEncoder(g.env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON output: %w", err)
	}
	return nil
}

// finish prints a command's report (JSON, or text) and exits 1 when failed.
// With -q text is printed only on failure, so that cron mails nothing but
// failures; JSON is always printed.
func (g *globals) finish(doc report.Doc, failed bool) error {
	text := func() { report.Text(g.env.Stdout, doc, g.width()) }
	if g.quiet && !failed {
		text = func() {}
	}
	if err := g.show(doc, text); err != nil || !failed {
		return err
	}
	return errSilentFailure
}

// show prints doc as JSON or, through text, as text: the answer of a
// command that asks for something (its version), which -q does not hide.
func (g *globals) show(doc any, text func()) error {
	if g.output == "json" {
		return g.printJSON(doc)
	}
	text()
	return nil
}

// mapAppError turns use-case errors into exit statuses: invalid options and
// configuration exit 2, a held lock 11, a command's own error keeps its own.
func mapAppError(err error) error {
	var ee *exitError
	var ue *distributor.UsageError
	var ce *distributor.ConfigError
	var he *distributor.LockHeldError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &ue), errors.As(err, &ce):
		return &exitError{code: ExitUsage, err: err}
	case errors.As(err, &he):
		return &exitError{code: ExitLocked, err: err}
	}
	return &exitError{code: ExitFailed, err: err}
}

// noArgs is cobra.NoArgs with a friendlier message.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	hint := ""
	if len(args) == 1 && cmd.Flags().Lookup("pipeline") != nil {
		hint = "; to name a pipeline: --pipeline " + args[0]
	}
	return usageErr("%s takes no arguments, got %q%s (see 'distributor %s --help')", cmd.CommandPath(), args, hint, cmd.Name())
}

const (
	defaultColumns = 80
	minColumns     = 40
)

// helpColumns is the width help and text reports fit: a terminal's (else
// $COLUMNS; at least minColumns), otherwise defaultColumns, so that output
// piped to a file is the same everywhere.
func helpColumns(env Env) int {
	if env.IsTerminal == nil || !env.IsTerminal(env.Stdout) {
		return defaultColumns
	}
	n := 0
	if env.TerminalWidth != nil {
		n = env.TerminalWidth(env.Stdout)
	}
	if n <= 0 && env.Getenv != nil {
		n, _ = strconv.Atoi(strings.TrimSpace(env.Getenv("COLUMNS")))
	}
	if n <= 0 {
		return defaultColumns
	}
	return max(n, minColumns)
}

// width is the width of this command line's help and text reports.
func (g *globals) width() int {
	if g.columns == 0 {
		return defaultColumns
	}
	return g.columns
}

// versionDoc is the document `distributor version --output json` prints.
type versionDoc struct {
	Command string `json:"command"`
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version (like --version)",
		Long: `version prints what 'distributor --version' prints: the module version and,
when the binary was built from a checkout, the VCS revision. With --output
json it prints {"command": "version", "version": ..., "commit": ...}.`,
		Example: `  distributor version
  distributor version --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.show(versionDoc{Command: "version", Version: g.env.Version, Commit: g.env.Commit}, func() {
				fmt.Fprintf(g.env.Stdout, "distributor %s\n", versionString(g.env))
			})
		},
	}
}

// versionString is the version and, when known, the commit.
func versionString(env Env) string {
	v := env.Version
	if env.Commit != "" {
		v += " (commit " + env.Commit + ")"
	}
	return v
}
