package catalog

import (
	"fmt"
	"strings"
)

// InvalidChoices tells an operator, one "- " line per choice, what to do about
// an invalid catalog at owner's root: restore it, fix it by hand, or --force,
// which deletes every file no catalog records (unmanaged: those seen, or nil).
func InvalidChoices(o Owner, unmanaged []string) string {
	sel := fmt.Sprintf("--pipeline %s --destination %s", o.PipelineID, o.DestinationID)
	force := "every file no catalog records (a robots.txt, say)"
	if n := len(unmanaged); n > 0 {
		shown := unmanaged[:min(n, 3)]
		force = fmt.Sprintf("the %d file(s) here that no catalog records: %s", n, strings.Join(shown, ", "))
		if n > len(shown) {
			force += ", ..."
		}
	}
	return "what to do, one of:\n" +
		"- restore " + FileName + " from a backup, then run `distributor reconcile-state " + sel + "` to drop the records of files deleted since (reconcile-state refuses the invalid one)\n" +
		"- or repair the value named above by hand\n" +
		"- or replace the root: `distributor run " + sel + " --force --dry-run` lists what --force deletes, which includes " + force +
		"; move those aside, then run it without --dry-run"
}
