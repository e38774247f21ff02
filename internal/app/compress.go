// Precompressed outputs (spec 3.4): sidecars beside the matching outputs of
// a directory store, the matching objects themselves stored gzip on an object
// store. A compressed output is planned like any other: its sha256 and size
// are the compressed bytes', known before the plan (the intent journal and
// skip_same need them) and checked again as the bytes are written.

package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/compress"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/glob"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/render"
)

// compressPlan returns outs with what c compresses: on a directory store each
// matching output's sidecars, on an object store (objects) the matching
// outputs stored gzip. Their SHA256 stays "" until compressed.digest.
func compressPlan(c *config.Compress, objects bool, outs []render.Output) ([]render.Output, error) {
	if c == nil || objects && !slices.Contains(c.Encodings, string(compress.Gzip)) {
		return outs, nil
	}
	res := slices.Clone(outs)
	taken := make(map[string]*render.Output, len(outs))
	for i := range outs {
		taken[outs[i].Path] = &outs[i]
	}
	for i := range outs {
		o := &outs[i]
		if o.Size < c.MinSize || o.Encoding != "" || !slices.ContainsFunc(c.Match, func(m string) bool { return glob.Match(m, o.Path) }) {
			continue
		}
		plain := *o
		if objects {
			res[i] = render.Output{Path: o.Path, Kind: o.Kind, SourcePath: o.SourcePath, Transform: o.Transform, URL: o.URL,
				Encoding: string(compress.Gzip), Plain: &plain}
			continue
		}
		for _, name := range c.Encodings {
			e := compress.Encoding(name)
			p := o.Path + e.Suffix()
			if t := taken[p]; t != nil {
				return nil, fmt.Errorf("compress: the %s sidecar of %s is %s, which is also the output of bundle file %q: rename one of them (paths.rename) or narrow compress.match",
					name, o.Path, p, t.SourcePath)
			}
			res = append(res, render.Output{Path: p, Kind: render.KindGenerated, SourcePath: o.SourcePath,
				Transform: e.Transform(), Encoding: name, Plain: &plain})
		}
	}
	slices.SortFunc(res, func(a, b render.Output) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// compressed computes and checks a destination's compressed bytes, with
// compressors kept from one output to the next (one per goroutine at a time).
// What digest compressed it remembers for the writes (and a second plan under
// the lock): the digest always, the bytes up to cacheBudget in all, so that a
// new output is compressed once, not once to plan and once to write.
type compressed struct {
	pool   sync.Pool    // of *compress.Compressor
	done   sync.Map     // of *digested, by output path and plain sha256 (key)
	budget atomic.Int64 // bytes held in done, at most cacheBudget
}

// cacheBudget bounds the compressed bytes a destination run holds between
// planning and writing; beyond it, outputs are compressed again as written.
const cacheBudget = 128 << 20

type digested struct {
	sha256 string
	size   int64
	bytes  []byte // nil when over budget
}

func key(o *render.Output) string { return o.Path + "\x00" + o.Plain.SHA256 }

// digest fills in the sha256 and size of the compressed outputs of outs. A
// sidecar whose output's bytes are unchanged keeps its record's (known),
// when present as recorded: its bytes would be the same, since the levels
// are fixed; a rewrite (--rewrite, --force) compresses again. Everything
// else is compressed, in parallel, to a hash.
func (z *compressed) digest(ctx context.Context, in plan.Input, outs []render.Output, open func(*render.Output) (io.ReadCloser, error)) error {
	var todo []int
	for i := range outs {
		o := &outs[i]
		if o.Encoding == "" || o.SHA256 != "" {
			continue
		}
		if rec, prec := in.Known.Record(o.Path), in.Known.Record(o.Plain.Path); !in.Rewrite && !in.Force && rec != nil && prec != nil &&
			o.Path != o.Plain.Path && prec.SHA256 == o.Plain.SHA256 && prec.Size == o.Plain.Size &&
			rec.Transform == o.Transform && rec.SourcePath == o.SourcePath && (in.Partial || in.Listing[o.Path] == rec.Size) {
			o.SHA256, o.Size = rec.SHA256, rec.Size
		} else if d := z.lookup(o); d != nil {
			o.SHA256, o.Size = d.sha256, d.size
		} else {
			todo = append(todo, i)
		}
	}
	return parallel(ctx, runtime.GOMAXPROCS(0), len(todo), func(ctx context.Context, k int) error {
		o := &outs[todo[k]]
		src, err := open(o.Plain)
		if err != nil {
			return err
		}
		defer src.Close()
		h := sha256.New()
		var buf *bytes.Buffer
		w := io.Writer(h)
		if z.budget.Add(o.Plain.Size) <= cacheBudget { // (compressed, never much larger)
			buf = bytes.NewBuffer(make([]byte, 0, o.Plain.Size/2))
			w = io.MultiWriter(h, buf)
		} else {
			z.budget.Add(-o.Plain.Size)
		}
		c := z.compressor()
		defer z.pool.Put(c)
		if o.Size, err = c.Copy(ctx, compress.Encoding(o.Encoding), w, src); err != nil {
			return fmt.Errorf("%s: %w", o.Path, err)
		}
		o.SHA256 = bundle.FormatSHA256(h.Sum(nil))
		d := &digested{sha256: o.SHA256, size: o.Size}
		if buf != nil { // exactly the bytes: a buffer's spare capacity would escape the budget
			d.bytes = bytes.Clone(buf.Bytes())
			z.budget.Add(int64(len(d.bytes)) - o.Plain.Size)
		}
		z.done.Store(key(o), d)
		return nil
	})
}

func (z *compressed) lookup(o *render.Output) *digested {
	d, _ := z.done.Load(key(o))
	dd, _ := d.(*digested) // nil when not there
	return dd
}

func (z *compressed) compressor() *compress.Compressor {
	if c, ok := z.pool.Get().(*compress.Compressor); ok {
		return c
	}
	return new(compress.Compressor)
}

// open returns o's compressed bytes, read from src as they are compressed on
// a goroutine of their own; the last read fails unless they are the bytes
// planned (o.SHA256, o.Size), so a source changed since planning is never
// recorded. Close stops the compression and closes src.
func (z *compressed) open(ctx context.Context, o *render.Output, src io.ReadCloser) io.ReadCloser {
	if d := z.lookup(o); d != nil && d.bytes != nil && d.sha256 == o.SHA256 {
		src.Close()
		return seekable(d.bytes) // compressed while planning
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer src.Close()
		c := z.compressor()
		defer z.pool.Put(c)
		h := sha256.New()
		n, err := c.Copy(ctx, compress.Encoding(o.Encoding), io.MultiWriter(pw, h), src)
		if got := bundle.FormatSHA256(h.Sum(nil)); err == nil && (n != o.Size || got != o.SHA256) {
			err = fmt.Errorf("%s: compressed %s to %d bytes %s, not the %d bytes %s planned: its source changed during the run",
				o.Path, o.Plain.Path, n, got, o.Size, o.SHA256)
		}
		pw.CloseWithError(err)
	}()
	return &pipeReader{pr, done}
}

type pipeReader struct {
	*io.PipeReader
	done chan struct{}
}

// Close stops the writer (its next write fails) and waits for it to end.
func (r *pipeReader) Close() error {
	r.PipeReader.Close()
	<-r.done
	return nil
}
