package report

import (
	"fmt"
	"time"
)

// Unlock is the document `distributor unlock` prints.
type Unlock struct {
	Target
	Locked  bool        `json:"locked"`
	Holder  *LockHolder `json:"holder"`
	Stale   bool        `json:"stale"`
	Removed bool        `json:"removed"`
	Failure
}

// LockHolder describes the process a lock record names.
type LockHolder struct {
	ID        string `json:"id"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	Command   string `json:"command"`
	Acquired  string `json:"acquired_at"`
	ExpiresAt string `json:"expires_at"`
}

func (u *Unlock) text(w *fitter) {
	fmt.Fprintf(w, "root %s (pipeline %s, destination %s)\n", u.Root, u.PipelineID, u.DestinationID)
	if !u.Locked {
		if u.Error != nil { // the lock could not even be read
			fmt.Fprintf(w, "  FAILED: %s\n", *u.Error)
			return
		}
		fmt.Fprintf(w, "  not locked: nothing to do\n")
		return
	}
	h := u.Holder
	fmt.Fprintf(w, "  locked by %s on host %s, pid %d, since %s (lease until %s)\n", h.Command, h.Host, h.PID, h.Acquired, h.ExpiresAt)
	switch {
	case u.Removed && u.Stale:
		fmt.Fprintf(w, "  the lock was stale: removed\n")
	case u.Removed:
		fmt.Fprintf(w, "  removed (--force)\n")
	case u.Error != nil:
		fmt.Fprintf(w, "  FAILED: %s\n", *u.Error)
	}
}

func FormatLockTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
