package distributor_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/distributor-dev/distributor"
)

// workspace makes a folder with a report bundle in out/ (sealed) and a
// configuration publishing it to public/ on local disk, and returns the
// loaded configuration.
func workspace() (*distributor.Config, string) {
	dir, err := os.MkdirTemp("", "distributor-example-")
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	must(os.MkdirAll(out, 0o755))
	must(os.WriteFile(filepath.Join(out, "report.md"), []byte("# Weather\n\nSunny, 21 °C.\n"), 0o644))
	must(os.WriteFile(filepath.Join(out, "data.csv"), []byte("day,temp\nmon,21\n"), 0o644))
	created := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	if _, err := distributor.SealBundle(context.Background(), out, "weather.2026-06-19", created); err != nil {
		log.Fatal(err)
	}
	cfg, err := distributor.ParseConfig([]byte(`
pipelines:
  - id: weather.daily
    source: out
    destinations: [site]
destinations:
  - id: site
    backend: local
    path: public
    retention:
      prune: {older_than: 30d, keep_min: 1}
`), dir)
	if err != nil {
		log.Fatal(err)
	}
	return cfg, dir
}

// published is workspace after a run: the bundle published to public/.
func published() (*distributor.Config, string) {
	cfg, dir := workspace()
	if _, err := distributor.Run(context.Background(), cfg, distributor.RunOptions{}); err != nil {
		log.Fatal(err)
	}
	return cfg, dir
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// actions prints each destination's action and its outputs' operations.
func actions(rep *distributor.RunReport) {
	for _, p := range rep.Pipelines {
		for _, d := range p.Destinations {
			fmt.Printf("%s -> %s: %s (%s)\n", p.PipelineID, d.DestinationID, d.Action, d.Status)
			for _, o := range d.Outputs {
				fmt.Printf("  %s %s\n", o.Op, o.Path)
			}
		}
	}
}

// A producer publishes what it just wrote: a dry run shows the plan, the
// run applies it, and a rerun of the same bundle changes nothing.
func ExampleRun() {
	cfg, dir := workspace()
	defer os.RemoveAll(dir)
	ctx := context.Background()
	for _, dry := range []bool{true, false, false} {
		rep, err := distributor.Run(ctx, cfg, distributor.RunOptions{DryRun: dry})
		if err != nil {
			log.Fatal(err)
		}
		actions(rep)
	}
	// Output:
	// weather.daily -> site: publish_new (planned)
	//   create data.csv
	//   create report.html
	// weather.daily -> site: publish_new (ok)
	//   create data.csv
	//   create report.html
	// weather.daily -> site: skip_same (ok)
	//   unchanged data.csv
	//   unchanged report.html
}

// Events report a run's progress, from several goroutines at once.
func ExampleEvent() {
	cfg, dir := workspace()
	defer os.RemoveAll(dir)
	written := make(chan string, 10)
	_, err := distributor.Run(context.Background(), cfg, distributor.RunOptions{
		OnEvent: func(e distributor.Event) {
			if e.Kind == distributor.EventDone {
				written <- e.Path
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(written), "outputs written")
	// Output: 2 outputs written
}

func ExampleValidate() {
	cfg, dir := workspace()
	defer os.RemoveAll(dir)
	rep, err := distributor.Validate(context.Background(), cfg, distributor.ValidateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("valid:", rep.Valid, "problems:", len(rep.Problems))
	// Output: valid: true problems: 0
}

func ExampleVerify() {
	cfg, dir := published()
	defer os.RemoveAll(dir)
	ctx := context.Background()
	must(os.WriteFile(filepath.Join(dir, "public", "data.csv"), []byte("day,temp\nmon,99\n"), 0o644))
	rep, err := distributor.Verify(ctx, cfg, distributor.VerifyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", rep.Failed(), "corrupt:", len(rep.Corrupt))
	// Output: failed: true corrupt: 1
}

func ExamplePrune() {
	cfg, dir := published()
	defer os.RemoveAll(dir)
	ctx := context.Background()
	// keep_min: 1 keeps the only publication, however old.
	rep, err := distributor.Prune(ctx, cfg, distributor.PruneOptions{Apply: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", rep.Failed(), "publications pruned:", len(rep.Publications))
	// Output: failed: false publications pruned: 0
}

func ExampleReconcileState() {
	cfg, dir := published()
	defer os.RemoveAll(dir)
	ctx := context.Background()
	must(os.Remove(filepath.Join(dir, "public", "data.csv")))
	rep, err := distributor.ReconcileState(ctx, cfg, distributor.ReconcileOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rep.Removed {
		fmt.Println("record dropped:", r.Path)
	}
	// Output: record dropped: data.csv
}

func ExampleShowState() {
	cfg, dir := published()
	defer os.RemoveAll(dir)
	ctx := context.Background()
	rep, err := distributor.ShowState(ctx, cfg, distributor.ShowOptions{Root: distributor.Root{Destination: "site"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rep.Close()
	outputs := 0
	err = rep.Outputs(func(o *distributor.StateOutput) error {
		outputs++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("state:", rep.State, "outputs:", outputs)
	// Output: state: catalog outputs: 2
}

func ExampleUnlock() {
	cfg, dir := workspace()
	defer os.RemoveAll(dir)
	rep, err := distributor.Unlock(context.Background(), cfg, distributor.UnlockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("removed:", rep.Removed)
	// Output: removed: false
}

func ExampleSealBundle() {
	dir, _ := os.MkdirTemp("", "bundle-")
	defer os.RemoveAll(dir)
	must(os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>Today</h1>\n"), 0o644))
	rep, err := distributor.SealBundle(context.Background(), dir, "site.today", time.Date(2026, 6, 19, 0, 0, 0, 0, time.UTC))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.ID, rep.Files, rep.Created)
	// Output: site.today 1 2026-06-19T00:00:00Z
}

func ExampleVerifyBundle() {
	cfg, dir := workspace()
	defer os.RemoveAll(dir)
	src := cfg.Pipelines()[0].Source
	must(os.WriteFile(filepath.Join(src, "data.csv"), []byte("changed\n"), 0o644))
	rep := distributor.VerifyBundle(context.Background(), src)
	fmt.Println("valid:", rep.Valid)
	for _, p := range rep.Problems {
		fmt.Println(p.Path)
	}
	// Output:
	// valid: false
	// data.csv
}

// A configuration is checked whole: every problem comes back at once, each
// with its line and field, and a mistyped name with a suggestion.
func ExampleParseConfig() {
	_, err := distributor.ParseConfig([]byte(`
pipelines:
  - id: weather.daily
    source: out
    destinations: [site]
destinations:
  - id: site
    backend: local
    path: public
    workflow: replace
`), os.TempDir())
	var cerr *distributor.ConfigFileError
	if errors.As(err, &cerr) {
		for _, p := range cerr.Problems {
			fmt.Printf("line %d: %s: %s\n", p.Line, p.Field, p.Msg)
		}
	}
	// Output:
	// line 10: destinations[0].workflow: "replace" is not one of additive, replacement; did you mean "replacement"?
}

func ExampleConfig_Destinations() {
	cfg, dir := workspace()
	defer os.RemoveAll(dir)
	for _, p := range cfg.Pipelines() {
		fmt.Println("pipeline", p.ID, "publishes to", p.Destinations)
	}
	for _, d := range cfg.Destinations() {
		fmt.Println("destination", d.ID, "on", d.Backend, d.Workflow)
	}
	// Output:
	// pipeline weather.daily publishes to [site]
	// destination site on local additive
}

func ExampleLoadConfig() {
	_, err := distributor.LoadConfig(filepath.Join(os.TempDir(), "no-such-dir", "distributor.yaml"))
	fmt.Println(err != nil)
	// Output: true
}
