package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/config"
)

// TestPlanFilters: publish.include and publish.exclude select bundle files
// by their bundle paths, before paths.rename and paths.prefix; what they
// filter out is listed, and a pattern that matches no bundle file warns.
func TestPlanFilters(t *testing.T) {
	// The report's link to the filtered-out draft is broken.
	const draftLink = `report.md:2: link to "drafts/next.md": this destination does not publish the bundle's drafts/next.md`
	files := map[string]string{
		"report.md":         "# Report\n[draft](drafts/next.md)\n",
		"drafts/next.md":    "# Next\n",
		"drafts/img/x.png":  "png",
		"data/today.csv":    "a,b\n",
		"data/scratch.tmp":  "tmp",
		"scratch.tmp":       "tmp",
		"img/chart.svg":     "<svg/>",
		"notes/internal.md": "# Internal\n",
	}
	tests := []struct {
		name             string
		include, exclude []string
		rename           map[string]string
		prefix           string
		want             []brief
		excluded         []string
		warnings         []string
	}{
		{name: "no filters publishes everything", want: []brief{
			cp("data/scratch.tmp", "data/scratch.tmp"), cp("data/today.csv", "data/today.csv"),
			cp("drafts/img/x.png", "drafts/img/x.png"), gen("drafts/next.html", "drafts/next.md"),
			cp("img/chart.svg", "img/chart.svg"), gen("notes/internal.html", "notes/internal.md"),
			gen("report.html", "report.md"), cp("scratch.tmp", "scratch.tmp"),
		}},
		{name: "exclude with ** at any depth", exclude: []string{"drafts/**", "**/*.tmp"}, want: []brief{
			cp("data/today.csv", "data/today.csv"), cp("img/chart.svg", "img/chart.svg"),
			gen("notes/internal.html", "notes/internal.md"), gen("report.html", "report.md"),
		}, excluded: []string{"data/scratch.tmp", "drafts/img/x.png", "drafts/next.md", "scratch.tmp"},
			warnings: []string{draftLink}},
		{name: "include then exclude", include: []string{"*.md", "{data,img}/**"}, exclude: []string{"**/*.tmp"}, want: []brief{
			cp("data/today.csv", "data/today.csv"), cp("img/chart.svg", "img/chart.svg"),
			gen("report.html", "report.md"),
		}, excluded: []string{"data/scratch.tmp", "drafts/img/x.png", "drafts/next.md", "notes/internal.md", "scratch.tmp"},
			warnings: []string{draftLink}},
		{name: "filters see bundle paths, not renamed or prefixed ones",
			include: []string{"report.md", "data/*.csv"}, exclude: []string{"out/**", "index.md"},
			rename: map[string]string{"report.md": "index.md", "data/today.csv": "latest.csv"}, prefix: "out/",
			want:     []brief{gen("out/index.html", "report.md"), cp("out/latest.csv", "data/today.csv")},
			excluded: []string{"data/scratch.tmp", "drafts/img/x.png", "drafts/next.md", "img/chart.svg", "notes/internal.md", "scratch.tmp"},
			warnings: []string{`publish.exclude pattern "out/**" matches no file of the bundle`, `publish.exclude pattern "index.md" matches no file of the bundle`, draftLink}},
		{name: "an include that matches nothing warns", include: []string{"**/*.svg", "*.pdf"}, want: []brief{
			cp("img/chart.svg", "img/chart.svg"),
		}, excluded: []string{"data/scratch.tmp", "data/today.csv", "drafts/img/x.png", "drafts/next.md", "notes/internal.md", "report.md", "scratch.tmp"},
			warnings: []string{`publish.include pattern "*.pdf" matches no file of the bundle`}},
		{name: "an empty include publishes nothing", include: []string{}, want: []brief{},
			excluded: []string{"data/scratch.tmp", "data/today.csv", "drafts/img/x.png", "drafts/next.md", "img/chart.svg", "notes/internal.md", "report.md", "scratch.tmp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dest()
			d.Publish.Include, d.Publish.Exclude = tt.include, tt.exclude
			d.Paths.Rename = tt.rename
			res := planFor(t, files, d, tt.prefix)
			if diff := cmp.Diff(tt.want, briefs(res)); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.excluded, res.Excluded); diff != "" {
				t.Errorf("excluded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, res.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFilteredLinkNotRewritten: a link to an excluded Markdown file is not
// rewritten to an HTML output that will not exist.
func TestFilteredLinkNotRewritten(t *testing.T) {
	d := dest()
	d.Publish = config.Publish{HTML: true, Source: config.SourceAssets, Exclude: []string{"drafts/**"}}
	res := planFor(t, map[string]string{"report.md": "[n](drafts/next.md)\n", "drafts/next.md": "# N\n"}, d, "")
	if got := string(output(t, res, "report.html").Content); !strings.Contains(got, `href="drafts/next.md"`) {
		t.Errorf("link to an excluded page was rewritten:\n%s", got)
	}
}
