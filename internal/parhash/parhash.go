// Package parhash hashes a stream on a goroutine of its own, overlapping with
// what the caller does with it on another core: a catalog of hundreds of MB
// hashed for its Version as it is read or written, a large bundle file
// verified against its manifest digest while it is copied.
package parhash

import (
	"errors"
	"hash"
)

// Hash is an io.Writer hashing on a goroutine of its own. Writes copy their
// bytes into a few reused buffers; Sum waits for the hashing to catch up. Sum
// (or Close) must be called once, to stop the goroutine.
type Hash struct {
	h     hash.Hash
	work  chan []byte
	free  chan []byte
	done  chan struct{}
	ended bool
	sum   []byte
}

// buffers bounds the bytes a Hash holds: this many of the largest write.
const buffers = 4

// New starts hashing with h.
func New(h hash.Hash) *Hash {
	p := &Hash{h: h, work: make(chan []byte, buffers), free: make(chan []byte, buffers),
		done: make(chan struct{})}
	for range buffers {
		p.free <- nil
	}
	go func() {
		defer close(p.done)
		for b := range p.work {
			p.h.Write(b)
			p.free <- b
		}
	}()
	return p
}

// Inline is a Hash that hashes as the bytes are written, on the caller's
// goroutine: for streams too small to gain from a hand-off.
func Inline(h hash.Hash) *Hash { return &Hash{h: h} }

// Write implements io.Writer; it fails only after Sum or Close.
func (p *Hash) Write(b []byte) (int, error) {
	if p.ended {
		return 0, errors.New("parhash: write after Sum or Close")
	}
	if p.work == nil {
		return p.h.Write(b)
	}
	buf := <-p.free
	buf = append(buf[:0], b...)
	p.work <- buf
	return len(b), nil
}

// Sum waits for every written byte to be hashed and returns the digest.
func (p *Hash) Sum() []byte {
	p.Close()
	return p.sum
}

// Close stops the hashing goroutine; Sum still returns the digest.
func (p *Hash) Close() {
	if p.ended {
		return
	}
	p.ended = true
	if p.work != nil {
		close(p.work)
		<-p.done
	}
	p.sum = p.h.Sum(nil)
}
