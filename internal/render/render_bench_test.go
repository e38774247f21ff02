package render_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/render"
)

// typicalReport returns a report of about 11 KB of Markdown in the shape
// producers write: sections with prose, a table per section, task lists,
// links to a second page, images, a code block and footnotes.
func typicalReport() string {
	var b strings.Builder
	b.WriteString("# Weather for tomorrow, 20 June 2026\n\nA warm, mostly sunny day across the region.\n\n")
	b.WriteString("![Temperature through the day](img/temperature.svg)\n\n")
	for s := range 12 {
		fmt.Fprintf(&b, "## Region %d: forecast and advice\n\n", s)
		b.WriteString("Morning fog clears by *10:00*; an **isolated thunderstorm** is possible in the hills after 17:00. ")
		b.WriteString("See [how we forecast](methods.md#ensemble) and <https://example.com/data> for the raw data.[^" + fmt.Sprint(s) + "]\n\n")
		b.WriteString("| Place | Morning | Afternoon | High | Rain |\n| --- | --- | --- | ---: | ---: |\n")
		for r := range 8 {
			fmt.Fprintf(&b, "| Place %d-%d | fog | sunny | %d °C | %d %% |\n", s, r, 20+r, 5*r)
		}
		b.WriteString("\n- [x] Sun cream from 11:00 to 16:00\n- [ ] Umbrella only in the hills\n- ~~Frost warning~~ lifted\n\n")
		b.WriteString("```text\nstation  temp  wind\nA        22.1  3.4\nB        24.9  1.2\n```\n\n")
		fmt.Fprintf(&b, "[^%d]: Issued by the example weather service for region %d.\n\n", s, s)
	}
	return b.String()
}

// BenchmarkPlanTypicalReport measures render.Plan for a bundle holding a
// typical 11 KB report, a second Markdown page it links to, and an image:
// read and verify the Markdown, render it with goldmark, rewrite links, wrap
// it in the built-in page, hash the result.
func BenchmarkPlanTypicalReport(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{
		"report.md":           typicalReport(),
		"methods.md":          "# Methods\n\n## Ensemble\n\nWe run 50 members and report the median.\n",
		"img/temperature.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`,
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := bundle.Seal(b.Context(), dir, "weather.tomorrow", time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)); err != nil {
		b.Fatal(err)
	}
	bd, err := bundle.Load(b.Context(), dir)
	if err != nil {
		b.Fatal(err)
	}
	d := &config.Destination{ID: "latest", Backend: "local", Workflow: config.WorkflowAdditive,
		Publish: config.Publish{HTML: true, Source: config.SourceAssets},
		Paths:   config.Paths{Rename: map[string]string{"report.md": "index.md"}},
		Links:   config.Links{BaseURL: "https://reports.example.com/weather/", Pretty: true}}
	b.SetBytes(int64(len(files["report.md"]) + len(files["methods.md"])))
	b.ReportAllocs()
	for b.Loop() {
		res, err := render.Plan(b.Context(), bd, d, "")
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Outputs) != 3 {
			b.Fatalf("%d outputs, want 3", len(res.Outputs))
		}
	}
}
