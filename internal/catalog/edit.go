package catalog

import (
	"fmt"
	"io"
	"slices"
	"sort"
)

// Edit is a change to a catalog, small next to it: records to put (new or
// replacing) and paths to delete. Applying it streams the base once.
type Edit struct {
	Fresh  bool     // drop every record of the base: the result holds Put only
	Header Header   // the result's header, written as is
	Put    []Output // records to add or replace, each path once
	Delete []string // paths whose records go (absent ones are ignored)
}

// sorted returns e's puts and deletes by path, refusing a path put twice or deleted.
func (e *Edit) sorted() ([]Output, []string, error) {
	put := append([]Output(nil), e.Put...)
	sort.Slice(put, func(i, j int) bool { return put[i].Path < put[j].Path })
	del := slices.Sorted(slices.Values(e.Delete))
	for i := range put {
		if i > 0 && put[i].Path == put[i-1].Path {
			return nil, nil, fmt.Errorf("catalog edit: %q put twice", put[i].Path)
		}
		if _, ok := slices.BinarySearch(del, put[i].Path); ok {
			return nil, nil, fmt.Errorf("catalog edit: %q both put and deleted", put[i].Path)
		}
	}
	return put, del, nil
}

// ApplyTo streams base (nil: none) through e to w in Encode's layout and
// returns the number of records written. It validates every base record;
// an unsorted base fails with ErrUnsorted (Encode sorts one). With splice,
// base is one ScanCanonical found in Encode's layout, and the records e
// leaves alone are copied undecoded: the caller guarantees (by the
// object's version) that the base is the one scanned.
func (e *Edit) ApplyTo(base io.Reader, w io.Writer, splice bool) (int, error) {
	put, del, err := e.sorted()
	if err != nil {
		return 0, err
	}
	enc, err := NewEncoder(w, e.Header)
	if err != nil {
		return 0, err
	}
	m := &merger{enc: enc, put: put, del: del}
	if base != nil && !e.Fresh {
		r := newReader(base, func(o *Output, path, raw []byte) error {
			if raw != nil {
				return mergeAt(m, path, nil, raw)
			}
			return mergeAt(m, o.Path, o, nil)
		})
		r.copy = splice
		if err := r.scan(); err != nil {
			return enc.n, err
		}
	}
	for ; m.i < len(m.put); m.i++ {
		if err := enc.Add(&m.put[m.i]); err != nil {
			return enc.n, err
		}
	}
	return enc.n, enc.Close()
}

// merger merges an edit into a base's records, which come in path order.
type merger struct {
	enc  *Encoder
	put  []Output // sorted by path
	del  []string // sorted
	i, j int      // the next put and delete
}

// mergeAt, called with each base record in path order (o, or with o nil
// raw: its bytes at path), writes the puts before it and the one replacing
// it, else the record unless deleted.
func mergeAt[P string | []byte](m *merger, path P, o *Output, raw []byte) error {
	for m.i < len(m.put) && m.put[m.i].Path < string(path) {
		if err := m.enc.Add(&m.put[m.i]); err != nil {
			return err
		}
		m.i++
	}
	for m.j < len(m.del) && m.del[m.j] < string(path) {
		m.j++
	}
	switch {
	case m.i < len(m.put) && m.put[m.i].Path == string(path):
		m.i++
		return m.enc.Add(&m.put[m.i-1])
	case m.j < len(m.del) && m.del[m.j] == string(path):
		return nil
	}
	return put(m.enc, path, o, raw, nil) // validated by the reader
}
