package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
)

// progressDisplay shows the library's events with mpb bars on out (stderr;
// nil: none), one per destination while its files are written. It is also the
// log writer (Write), so log lines appear above the bars; with log set it logs
// the writes (-v) only after releasing mu, which Write takes. The last Finish
// shuts mpb down, so nothing is drawn once the report is printed.
type progressDisplay struct {
	out      io.Writer
	terminal bool // redraw in place (cursor movement); else append plain frames
	log      *slog.Logger

	mu    sync.Mutex
	p     *mpb.Progress // nil when no destination is being written
	cw    *console      // p's console writer
	bars  map[string]*destinationBar
	shown int // the bars of bars: the display stops when none is left
}

// destinationBar is one destination's bar (nil when none is shown) and
// counters, updated by transfers and read by mpb's render goroutine.
type destinationBar struct {
	bar       *mpb.Bar
	files     int64
	bytes     int64
	start     time.Time
	lastLog   time.Time // guarded by progressDisplay.mu
	doneFiles atomic.Int64
	doneBytes atomic.Int64
}

// logProgressEvery bounds how often a destination's progress is logged.
const logProgressEvery = 10 * time.Second

func (d *progressDisplay) event(e distributor.Event) {
	switch e.Kind {
	case distributor.EventStart:
		d.Start(e.Task, e.Files, e.Bytes)
	case distributor.EventDone:
		d.Done(e.Task, e.Path, e.Bytes)
	case distributor.EventFinish:
		d.Finish(e.Task)
	}
}

// refreshNonTerminal is how often `--progress always` appends a frame to a non-terminal:
// often enough to follow a long transfer, rarely enough not to flood a log.
const refreshNonTerminal = time.Second

// console is mpb's console writer (a buffer flushed once per frame) with two
// changes: a terminal reporting no size (a pseudo-terminal whose size was
// never set, as under some container runtimes) counts as 80x24, where mpb
// would draw empty lines; and drain, for log lines written after the last
// frame, which mpb would drop when it shuts down.
type console struct {
	*cupwriter.Writer
	out io.Writer
	// esc is how many bytes at the start of the buffer only move the cursor
	// up for the next frame: Flush leaves them there.
	esc int
}

func (c *console) GetTermSize() (width, height int, err error) {
	width, height, err = c.Writer.GetTermSize()
	if err != nil || width <= 0 {
		return defaultColumns, 24, nil
	}
	return width, max(height, 2), nil
}

func (c *console) Flush(lines int) error {
	err := c.Writer.Flush(lines)
	c.esc = c.Writer.Len()
	return err
}

// drain writes what is left in the buffer after the display stopped, minus
// the cursor movement meant for a next frame that will not come.
func (c *console) drain() {
	if rest := c.Writer.Bytes()[c.esc:]; len(rest) > 0 {
		_, _ = c.out.Write(rest) // like a log line: nowhere to report a failure
	}
	c.Writer.Reset()
	c.esc = 0
}

// Start adds a bar for destination's writes.
func (d *progressDisplay) Start(destination string, files int, bytes int64) {
	if d.log != nil {
		defer d.log.Info("writing", "destination", destination, "files", files, "bytes", report.FormatBytes(bytes))
	}
	showBar := d.out != nil && files > 0 // deletes only: nothing to show
	if !showBar && d.log == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bars == nil {
		d.bars = map[string]*destinationBar{}
	}
	if _, dup := d.bars[destination]; dup {
		return // labels are pipeline -> destination, unique in one run
	}
	b := &destinationBar{files: int64(files), bytes: bytes, start: time.Now()}
	b.lastLog = b.start
	d.bars[destination] = b
	if !showBar {
		return
	}
	if d.p == nil {
		// On a terminal the cursor moves up to redraw (forced: the fake
		// terminals of tests are not *os.File).
		d.cw = &console{Writer: cupwriter.New(d.out, d.terminal), out: d.out}
		opts := []mpb.ContainerOption{mpb.WithConsoleWriter(d.cw), mpb.WithAutoRefresh()}
		if !d.terminal {
			opts = append(opts, mpb.WithRefreshRate(refreshNonTerminal))
		}
		d.p = mpb.New(opts...)
	}
	// One unit per file plus one per byte: complete only after the last
	// file, even an empty one.
	d.shown++
	b.bar = d.p.AddBar(b.files+b.bytes, mpb.BarWidth(40),
		mpb.PrependDecorators(
			decor.Name(destination, decor.WCSyncSpaceR),
		),
		mpb.AppendDecorators(
			decor.Any(b.counters, decor.WCSyncSpace),
			decor.OnAbort(decor.OnComplete(decor.Percentage(decor.WC{W: 5}), "done"), "stopped"),
		),
	)
}

// counters renders "2/3 files  1.1 KiB/4.0 KiB", padded so that the bar
// keeps its width while the numbers grow.
func (b *destinationBar) counters(decor.Statistics) string {
	total := report.FormatBytes(b.bytes)
	files := fmt.Sprint(b.files)
	done := b.doneBytes.Load()
	return fmt.Sprintf("%*d/%s files  %*s/%s", len(files), b.doneFiles.Load(), files,
		len(total), report.FormatBytes(done), total) + rateETA(done, b.bytes, b.doneFiles.Load() >= b.files, time.Since(b.start))
}

// rateETA renders "  1.2 MiB/s  ETA 0:42" for done of total bytes after
// elapsed ("" until a rate is known; no ETA once finished).
func rateETA(done, total int64, finished bool, elapsed time.Duration) string {
	if done <= 0 || elapsed < 500*time.Millisecond {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	s := "  " + report.FormatBytes(int64(rate)) + "/s"
	if !finished && total > done {
		s += "  ETA " + formatETA(time.Duration(float64(total-done)/rate*float64(time.Second)))
	}
	return s
}

// formatETA formats d as "m:ss", or "h:mm:ss" from an hour on.
func formatETA(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}

// Done advances destination's bar by one file of n bytes.
func (d *progressDisplay) Done(destination, path string, n int64) {
	d.mu.Lock()
	b := d.bars[destination]
	logProgress := false
	if b != nil {
		b.doneFiles.Add(1)
		b.doneBytes.Add(n)
		if now := time.Now(); d.log != nil && now.Sub(b.lastLog) >= logProgressEvery && b.doneFiles.Load() < b.files {
			b.lastLog, logProgress = now, true
		}
	}
	d.mu.Unlock()
	if b == nil {
		return
	}
	if b.bar != nil {
		b.bar.IncrInt64(1 + n) // after the counters: the final frame shows them all
	}
	if d.log == nil {
		return
	}
	d.log.Debug("wrote", "destination", destination, "path", path, "bytes", n)
	if logProgress {
		done := b.doneBytes.Load()
		d.log.Info("progress", "destination", destination, "files", fmt.Sprintf("%d/%d", b.doneFiles.Load(), b.files),
			"bytes", report.FormatBytes(done)+"/"+report.FormatBytes(b.bytes),
			"rate", strings.TrimLeft(rateETA(done, b.bytes, false, time.Since(b.start)), " "))
	}
}

// Finish ends destination's bar, "stopped" unless every file was written;
// after the last bar it draws the final frame and stops the display.
func (d *progressDisplay) Finish(destination string) {
	d.mu.Lock()
	b := d.bars[destination]
	if b == nil {
		d.mu.Unlock()
		return
	}
	delete(d.bars, destination)
	if b.bar != nil {
		d.shown--
		if b.doneFiles.Load() < b.files {
			b.bar.Abort(false) // keep it on screen, marked stopped
		} else if !b.bar.Completed() {
			b.bar.SetTotal(-1, true) // every file done: complete whatever the byte count
		}
	}
	if d.shown == 0 && d.p != nil {
		d.p.Wait() // the final frame; then mpb's goroutines end
		d.cw.drain()
		d.p, d.cw = nil, nil
	}
	d.mu.Unlock()
	if d.log != nil {
		d.log.Info("writes finished", "destination", destination, "files", fmt.Sprintf("%d/%d", b.doneFiles.Load(), b.files),
			"bytes", report.FormatBytes(b.doneBytes.Load()), "elapsed", time.Since(b.start).Round(time.Millisecond))
	}
}

// Write writes log output above the bars while they are shown, else to
// stderr. It holds the lock while mpb takes the line, so Finish cannot shut
// the display down in between: no log line is lost or torn by a redraw.
func (d *progressDisplay) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p != nil {
		if n, err := d.p.Write(b); err == nil {
			return n, nil
		}
	}
	return d.out.Write(b)
}

// progressLogger returns a logger at level, like globals.setup's, writing through d.
func progressLogger(level slog.Level, d *progressDisplay) *slog.Logger {
	return slog.New(slog.NewTextHandler(d, &slog.HandlerOptions{Level: level}))
}
