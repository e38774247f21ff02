// Package iocount counts what a read path asks, for tests that pin it: how
// often a context is checked, and how large each read is.
package iocount

import (
	"context"
	"io"
)

// Ctx counts the calls of its Err, as a context bound to a root's lock
// checks the lock's fence (a clock read) at every call.
type Ctx struct {
	context.Context
	Errs int
}

// Err implements context.Context, counting the call.
func (c *Ctx) Err() error {
	c.Errs++
	return c.Context.Err()
}

// Reader records the size of every read asked of R.
type Reader struct {
	R     io.Reader
	Asked []int
}

// Read implements io.Reader, recording len(p).
func (s *Reader) Read(p []byte) (int, error) {
	s.Asked = append(s.Asked, len(p))
	return s.R.Read(p)
}
