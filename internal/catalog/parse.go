package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/distributor-dev/distributor/internal/strictjson"
)

// Header is a catalog's document-level part: all but its records.
type Header struct {
	DistributorVersion string // optional
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Header returns c's header.
func (c *Catalog) Header() Header {
	return Header{DistributorVersion: c.DistributorVersion, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// ErrUnsorted is returned (wrapped) by Scan for outputs not in strictly
// increasing path order: still a valid catalog (Parse accepts it), but
// distributor never writes one.
var ErrUnsorted = errors.New("catalog outputs are not sorted by path")

// Scan strictly decodes a schema-4 catalog from r in constant memory, calling
// fn with each record (a fresh Output) in order, enforcing Parse's rules and
// Encode's path order (ErrUnsorted). It returns the header and record count;
// fn's error stops it, returned as is. Read classifies other documents.
func Scan(r io.Reader, fn func(*Output) error) (Header, int, error) {
	h, n, _, err := ScanCanonical(r, func(o *Output) error { fresh := *o; return fn(&fresh) })
	return h, n, err
}

// ScanCanonical is Scan that also reports whether every record is in
// Encode's exact layout (the condition for splicing). It hands fn the same
// Output each time, so that no record allocates: fn copies what it keeps.
func ScanCanonical(src io.Reader, fn func(*Output) error) (h Header, n int, canonical bool, err error) {
	r := newReader(src, func(o *Output, _, _ []byte) error { return fn(o) })
	if err := r.scan(); err != nil {
		return Header{}, r.n, false, err
	}
	return r.h, r.n, r.canonical, nil
}

// scan reads the document, returning a callback's error as is, any other as the catalog's.
func (r *reader) scan() error {
	err := r.read()
	if err == nil || r.stop != nil {
		return err
	}
	return fmt.Errorf("decode catalog: %w", err)
}

// Read classifies the bytes of a catalog file (nil: none, StatusNone). It
// never fails: problems yield StatusInvalid with State.Problem set.
func Read(data []byte) State {
	if data == nil {
		return State{Status: StatusNone}
	}
	// Only a document that is not a valid catalog is probed.
	c, perr := Parse(data)
	if perr == nil {
		return State{Status: StatusCatalog, SchemaVersion: SchemaVersion, Catalog: c}
	}
	var probe map[string]jsontext.Value
	if err := strictjson.Unmarshal(data, &probe); err != nil {
		if errors.Is(err, strictjson.ErrInvalidText) {
			return State{Status: StatusInvalid, Problem: fmt.Errorf("decode catalog: %w", err)}
		}
		return State{Status: StatusInvalid, Problem: fmt.Errorf("not a JSON object: %w", err)}
	}
	raw, ok := probe["schema_version"]
	if !ok {
		return State{Status: StatusInvalid, Problem: errors.New("no schema_version")}
	}
	var version int
	if err := strictjson.Unmarshal(raw, &version); err != nil {
		return State{Status: StatusInvalid, Problem: fmt.Errorf("schema_version %s is not an integer", raw)}
	}
	s := State{Status: StatusInvalid, SchemaVersion: version, Problem: perr}
	switch {
	case version >= 1 && version <= 3:
		s.Status, s.Problem = StatusLegacy, fmt.Errorf("schema_version %d is superseded legacy state", version)
	case version > SchemaVersion:
		s.Status, s.Problem = StatusFuture, fmt.Errorf("schema_version %d is newer than this distributor understands (%d)", version, SchemaVersion)
	case version != SchemaVersion:
		s.Problem = fmt.Errorf("schema_version %d is not a known version", version)
	}
	return s
}

// Parse decodes and validates a schema-4 document strictly. Unlike Scan it
// accepts records in any order (each path once) and names every problem
// with the values; one with the JSON text alone, with line and column.
func Parse(data []byte) (*Catalog, error) {
	c := &Catalog{SchemaVersion: SchemaVersion, Outputs: []Output{}}
	r := newReader(bytes.NewReader(data), func(o *Output, _, _ []byte) error {
		c.Outputs = append(c.Outputs, *o)
		return nil
	})
	r.whole, r.seen = true, map[string]int{}
	if err := r.read(); err != nil {
		if _, ok := err.(*strictjson.Error); ok {
			err = decodeError(err, data)
		}
		return nil, err
	}
	c.DistributorVersion, c.CreatedAt, c.UpdatedAt = r.h.DistributorVersion, r.h.CreatedAt, r.h.UpdatedAt
	return c, nil
}

// decodeError names a strict decoder's error about data as the catalog's, with line and column.
func decodeError(err error, data []byte) error {
	e, ok := err.(*strictjson.Error)
	if ok && e.Offset >= 0 {
		e.Line, e.Column = strictjson.LineColumn(data, e.Offset)
	}
	if ok && !e.Syntax && e.Line > 0 {
		return fmt.Errorf("decode catalog: line %d, column %d: %w", e.Line, e.Column, err)
	}
	return fmt.Errorf("decode catalog: %w", err)
}
