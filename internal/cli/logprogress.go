package cli

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/distributor-dev/distributor/internal/app"
)

// logProgress reports transfers as log lines, for --log-level info (-v)
// and debug: at info when a destination's writes start and finish, and a
// progress line with rate and ETA at most every logProgressEvery; at debug
// also every file written.
type logProgress struct {
	log *slog.Logger
	mu  sync.Mutex
	ds  map[string]*logDest
}

type logDest struct {
	files, bytes         int64
	doneFiles, doneBytes int64
	start, last          time.Time
}

// logProgressEvery bounds how often a destination's progress is logged.
const logProgressEvery = 10 * time.Second

var _ app.Progress = (*logProgress)(nil)

func (l *logProgress) Start(destination string, files int, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ds == nil {
		l.ds = map[string]*logDest{}
	}
	now := time.Now()
	l.ds[destination] = &logDest{files: int64(files), bytes: bytes, start: now, last: now}
	l.log.Info("writing", "destination", destination, "files", files, "bytes", formatBytes(bytes))
}

func (l *logProgress) Done(destination, path string, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.ds[destination]
	if d == nil {
		return
	}
	d.doneFiles++
	d.doneBytes += n
	l.log.Debug("wrote", "destination", destination, "path", path, "bytes", n)
	if now := time.Now(); now.Sub(d.last) >= logProgressEvery && d.doneFiles < d.files {
		d.last = now
		l.log.Info("progress", "destination", destination, "files", formatCount(d.doneFiles, d.files),
			"bytes", formatBytes(d.doneBytes)+"/"+formatBytes(d.bytes), "rate", trimRate(rateETA(d.doneBytes, d.bytes, false, now.Sub(d.start))))
	}
}

func (l *logProgress) Finish(destination string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.ds[destination]
	if d == nil {
		return
	}
	delete(l.ds, destination)
	l.log.Info("writes finished", "destination", destination, "files", formatCount(d.doneFiles, d.files),
		"bytes", formatBytes(d.doneBytes), "elapsed", time.Since(d.start).Round(time.Millisecond))
}

func formatCount(done, total int64) string {
	return formatInt(done) + "/" + formatInt(total)
}

func formatInt(n int64) string { return slog.Int64Value(n).String() }

// trimRate drops the leading spaces of rateETA's rendering.
func trimRate(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return s
}

// teeProgress sends transfer events to several displays.
type teeProgress []app.Progress

func (t teeProgress) Start(d string, files int, bytes int64) {
	for _, p := range t {
		p.Start(d, files, bytes)
	}
}

func (t teeProgress) Done(d, path string, n int64) {
	for _, p := range t {
		p.Done(d, path, n)
	}
}

func (t teeProgress) Finish(d string) {
	for _, p := range t {
		p.Finish(d)
	}
}

// infoEnabled reports whether l logs at info level.
func infoEnabled(l *slog.Logger) bool {
	return l != nil && l.Enabled(context.Background(), slog.LevelInfo)
}
