package dirstore

import (
	"context"
	"sync"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Watch cuts a remote call whose client cannot cancel a request (SFTP,
// FTP): if ctx ends and stop has not been called storage.AnswerGrace later
// (the grace lets the answer say what the server did), cut runs, which
// closes the call's connection: other calls on it fail, the next one
// connects anew.
func Watch(ctx context.Context, cut func()) (stop func()) {
	var (
		mu    sync.Mutex
		done  bool
		timer *time.Timer
	)
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			timer = time.AfterFunc(storage.AnswerGrace, cut)
		}
	})
	return func() {
		stopAfter()
		mu.Lock()
		defer mu.Unlock()
		done = true
		if timer != nil {
			timer.Stop()
		}
	}
}
