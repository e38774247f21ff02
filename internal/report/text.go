package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/plan"
)

func (r *Run) text(w *fitter) {
	for _, p := range r.Pipelines {
		fmt.Fprintf(w, "pipeline %s\n", p.PipelineID)
		if s := p.Source; s != nil && s.ID != "" {
			fmt.Fprintf(w, "  source   %s  (created %s)\n           %s\n           %s\n", s.ID, s.Created, s.Path, s.Digest)
		} else if p.Source != nil {
			fmt.Fprintf(w, "  source   %s\n", p.Source.Path)
		}
		w.list("  warning: %s\n", "", p.Warnings)
		if p.Error != nil {
			fmt.Fprintf(w, "  error: %s\n", indentLines(*p.Error, "    "))
			fmt.Fprintf(w, "  nothing was published for this pipeline\n")
		}
		for _, d := range p.Destinations {
			writeDestination(w, &d)
		}
	}
	s := r.Summary
	verb := "applied"
	if r.DryRun {
		verb = "dry run, nothing was written"
	}
	fmt.Fprintf(w, "\n%d destination(s), %d failed (%s): %d created, %d overwritten, %d unchanged, %d deleted\n",
		s.Destinations, s.Failed, verb, s.Created, s.Overwritten, s.Unchanged, s.Deleted)
	if s.Failed > 0 {
		// The counts above are what took effect; say what was planned.
		fmt.Fprintf(w, "planned: %s (a failed destination counts only what it applied)\n", countsLine(s.Planned, false))
	}
	if s.PipelinesFailed > 0 {
		fmt.Fprintf(w, "%d pipeline(s) failed as a whole (see the errors above)\n", s.PipelinesFailed)
	}
}

func writeDestination(w *fitter, d *Destination) {
	fixed := map[bool]string{true: ", fixed path"}[d.FixedPath]
	fmt.Fprintf(w, "\n  destination %s  %s  (%s, %s%s)\n", d.DestinationID, d.Root, d.Backend, d.Workflow, fixed)
	if d.Action != "" {
		fmt.Fprintf(w, "    state %s -> %s\n", d.State, d.Action)
	}
	d.RootRecovery.write(w, "    ", d.RecoveryPending)
	w.list("    warning: %s\n", "", d.Warnings)
	if len(d.Excluded) > 0 {
		fmt.Fprintf(w, "    %d bundle file(s) not published (publish.include/exclude): %s\n", len(d.Excluded), strings.Join(first(d.Excluded, 5), ", "))
	}
	if d.Status == StatusFailed && len(d.Outputs) > 0 {
		fmt.Fprintf(w, "    plan:\n")
	}
	writeOutputs(w, d.Outputs)
	if plan.Action(d.Action) == plan.FailUnmanaged {
		upTo(w, d.Unmanaged, "blocked path(s)", func(u string) {
			w.pathLine(fmt.Sprintf("    %-10s ", "blocked"), u, "  (exists, not managed: left untouched)")
		})
	} else if len(d.Unmanaged) > 0 {
		fmt.Fprintf(w, "    %d unmanaged path(s) at the root left alone: %s\n", len(d.Unmanaged), strings.Join(first(d.Unmanaged, 5), ", "))
	}
	switch {
	case d.Status == StatusFailed && d.Planned != nil:
		fmt.Fprintf(w, "    planned  %s\n    applied  %s\n", countsLine(*d.Planned, true), countsLine(d.Counts, true))
	case d.Status != StatusFailed:
		fmt.Fprintf(w, "    %s\n", countsLine(d.Counts, true))
	}
	if d.PrimaryURL != "" {
		fmt.Fprintf(w, "    url %s\n", d.PrimaryURL)
	}
	writeNotes(w, d)
	for _, n := range d.Notifications {
		if n.Status != "sent" {
			fmt.Fprintf(w, "    warning: notification %s (%s) %s: %s\n", n.ID, n.Event, n.Status, n.Error)
		}
	}
	switch {
	case d.Status == StatusFailed && d.Error != nil:
		fmt.Fprintf(w, "    FAILED: %s\n", indentLines(*d.Error, "      "))
	case d.Status == StatusPlanned:
		fmt.Fprintf(w, "    dry run: nothing was written\n")
	case plan.Action(d.Action) == plan.SkipSame:
		fmt.Fprintf(w, "    ok: already published, nothing to do\n")
	case d.Status == StatusOK:
		fmt.Fprintf(w, "    ok\n")
	}
}

// writeOutputs lists up to maxPathsText changed outputs, counting the rest.
func writeOutputs(w *fitter, outputs []Output) {
	unchanged, listed := 0, 0
	more := map[string]int{} // changes past maxPathsText, by op
	for _, o := range outputs {
		if o.Op == string(plan.OpUnchanged) {
			unchanged++
			continue
		}
		if listed == maxPathsText {
			more[o.Op]++
			continue
		}
		listed++
		w.pathLine(fmt.Sprintf("    %-10s ", o.Op), o.Path, outputDetail(o))
	}
	if len(more) > 0 {
		n, parts := 0, []string{}
		for _, op := range []plan.Op{plan.OpCreate, plan.OpOverwrite, plan.OpUpdate, plan.OpDelete} {
			if c := more[string(op)]; c > 0 {
				n += c
				parts = append(parts, fmt.Sprintf("%d %s", c, op))
			}
		}
		fmt.Fprintf(w, "    ... and %d more change(s): %s (--output json lists them all)\n", n, strings.Join(parts, ", "))
	}
	if unchanged > 0 {
		fmt.Fprintf(w, "    %-10s %d path(s) already up to date\n", "unchanged", unchanged)
	}
}

func outputDetail(o Output) string {
	detail := ""
	plain, sidecar := catalog.SidecarOf(o.Path, o.Transform)
	switch {
	case o.Op == string(plan.OpDelete):
	case sidecar:
		detail = fmt.Sprintf("  (%s of %s, %s)", o.Transform, plain, size(o.Size))
	case o.Kind == "generated" && o.SourcePath == "":
		detail = fmt.Sprintf("  (archive index, %s)", size(o.Size))
	case o.Kind == "generated":
		detail = fmt.Sprintf("  (from %s, %s)", o.SourcePath, size(o.Size))
	case o.Size != nil:
		detail = fmt.Sprintf("  (%s)", size(o.Size))
	}
	if o.Op == string(plan.OpUpdate) {
		detail += "  record only"
	}
	return detail
}

func countsLine(c plan.Counts, retained bool) string {
	s := fmt.Sprintf("%d created, %d overwritten, %d unchanged, %d deleted", c.Created, c.Overwritten, c.Unchanged, c.Deleted)
	if retained {
		s += fmt.Sprintf(", %d retained", c.Retained)
	}
	return s
}

// writeNotes explains a legacy root's deletes and what a fixed-path root's action means.
func writeNotes(w io.Writer, d *Destination) {
	legacyClear := d.State == "legacy" && plan.Action(d.Action) == plan.ReplaceCatalog
	if legacyClear {
		deletes := 0
		for _, o := range d.Outputs {
			if o.Op == string(plan.OpDelete) {
				deletes++
			}
		}
		fmt.Fprintf(w, "    note: %s: the %d path(s) marked delete are recorded by no catalog and are deleted (the delete guard applies)\n", d.Reason, deletes)
	}
	if d.FixedPath && d.Status != StatusFailed && !legacyClear {
		switch plan.Action(d.Action) {
		case plan.UpsertAdditive:
			fmt.Fprintf(w, "    note: fixed-path root: this run upserts into the outputs already managed there\n")
		case plan.ReplaceCatalog:
			fmt.Fprintf(w, "    note: fixed-path root: this run replaces this owner's outputs there; other owners' outputs stay\n")
		}
	}
}

func (v *Validate) text(w *fitter) {
	verdict := "ok"
	if !v.Valid {
		verdict = fmt.Sprintf("%d problem(s)", len(v.Problems))
	}
	fmt.Fprintf(w, "configuration %s: %s (%d pipeline(s), %d destination(s))\n", v.Config, verdict, v.Pipelines, v.Destinations)
	if s := v.Source; s != nil {
		fmt.Fprintf(w, "source %s\n  %s\n  %s\n", s.ID, s.Path, s.Digest)
	}
	for _, s := range v.Sources {
		fmt.Fprintf(w, "pipeline %s: source %s\n  %s\n  %s\n", s.PipelineID, s.ID, s.Path, s.Digest)
	}
	w.list("warning: %s\n", "", v.Warnings)
	w.list("note: %s\n", "  ", v.Notes)
	for _, o := range v.Outputs {
		if o.Root != "" {
			fmt.Fprintf(w, "  %s -> %s: %d output(s) at %s", o.PipelineID, o.DestinationID, o.Outputs, o.Root)
			if o.PrimaryURL != "" {
				fmt.Fprintf(w, ", url %s", o.PrimaryURL)
			}
			fmt.Fprintln(w)
		}
	}
	w.list("problem: %s\n", "  ", v.Problems)
	if !v.Valid {
		fmt.Fprintf(w, "invalid\n")
	}
}

func (v *BundleVerify) text(w *fitter) {
	w.list("warning: %s\n", "", v.Warnings)
	if v.Valid {
		fmt.Fprintf(w, "%s: valid bundle %s, %d file(s)\n  digest %s\n", v.Dir, v.ID, v.Files, v.Digest)
		return
	}
	fmt.Fprintf(w, "%s: invalid bundle, %d problem(s):\n", v.Dir, len(v.Problems))
	for _, p := range v.Problems {
		path := ""
		if p.Path != "" {
			path = p.Path + ": "
		}
		fmt.Fprintf(w, "  %s%s\n", path, indentLines(p.Reason, "    "))
	}
	if v.Hint != "" {
		fmt.Fprintf(w, "%s\n", v.Hint)
	}
}

func size(n *int64) string {
	if n == nil {
		return "?"
	}
	return FormatBytes(*n)
}

// FormatBytes formats n as "512 B", "1.5 KiB", "12.0 MiB"...
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for x := n / unit; x >= unit; x /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("... (%d more)", len(s)-n))
}

func indentLines(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

func (r *RootRecovery) write(w io.Writer, indent string, pending bool) {
	if line := recoveryLine(r.Recovered, pending); line != "" {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
	if s := r.TempSwept; s != nil {
		fmt.Fprintf(w, "%sremoved %d temporary file(s) that interrupted writes left: %s\n", indent, s.Files, bytesLine(s.Bytes))
	}
}

// recoveryLine says what a recovery did (or, pending, will do); "" if none.
func recoveryLine(rc *Recovery, pending bool) string {
	switch {
	case rc == nil && pending:
		return "recovery pending: a dead run left its intent journal; a real run recovers the root first"
	case rc == nil:
		return ""
	case pending && rc.Committed:
		return "recovery pending: a dead run left its intent journal after committing its catalog; a real run removes the journal first"
	case pending:
		return fmt.Sprintf("recovery pending: a dead run left its intent journal; a real run recovers the root first (rolls forward %d change(s), "+
			"removes %d file(s) the dead run created (%s), drops %d record(s), leaves %d file(s) it cannot prove its own); this plan is what it does after",
			rc.RolledForward, rc.Removed, bytesLine(rc.RemovedBytes), rc.Dropped, rc.Left)
	case rc.Committed:
		return "recovered the root first: a dead run had committed its catalog; its journal was removed"
	}
	return fmt.Sprintf("recovered the root from a dead run's intent journal first: rolled forward %d change(s), "+
		"removed %d file(s) it created (%s), dropped %d record(s), left %d file(s) it could not prove its own",
		rc.RolledForward, rc.Removed, bytesLine(rc.RemovedBytes), rc.Dropped, rc.Left)
}

// bytesLine renders a size removed: "0 B", "69.0 MiB (72351744 B)".
func bytesLine(n int64) string {
	if n < 1024 {
		return FormatBytes(n)
	}
	return fmt.Sprintf("%s (%d B)", FormatBytes(n), n)
}
