package catalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// ErrNotSpliceable is returned (wrapped) by Splice for a base that is not
// laid out as Encode writes it. Nothing about the base's validity follows:
// apply the edit with ApplyTo instead.
var ErrNotSpliceable = errors.New("catalog is not in the layout distributor writes")

// Splice is ApplyTo for a base that Scan accepted and found in Encode's
// layout throughout (ScanLayout's canonical result), unchanged since: it
// copies the records the edit leaves alone byte for byte, finding them by
// their lines, without decoding or validating them again. The output is
// byte-identical to ApplyTo's. The caller guarantees the base's bytes are
// the ones scanned (by comparing the stored object's version after the
// read, which a store's ReadVersioned makes cheap); a base that departs from
// the layout fails with ErrNotSpliceable, having written an incomplete
// document to w. It returns the number of records written.
func (e *Edit) Splice(base io.Reader, w io.Writer) (int, error) {
	m, err := e.merger(w)
	if err != nil {
		return 0, err
	}
	if !e.Fresh {
		sp := splicer{r: bufio.NewReaderSize(base, 256<<10), enc: m.enc}
		err := sp.records(func(path []byte) error {
			keep, err := mergeAt(m, path)
			if keep && err == nil {
				err = m.enc.startRaw(path)
			}
			if err != nil {
				return err
			}
			return sp.copyRecord(keep)
		})
		if err != nil {
			return m.enc.n, err
		}
	}
	return m.finish()
}

// splicer reads a catalog in Encode's layout line by line.
type splicer struct {
	r      *bufio.Reader
	enc    *Encoder
	first  []byte // the current record's first line
	copied bool   // copyRecord ran for the current record
}

func (sp *splicer) line(what string) ([]byte, error) {
	b, err := sp.r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF || err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%s: %w", what, ErrNotSpliceable)
		}
		return nil, err
	}
	return b, nil
}

// records calls fn with the path of each record of the base, in order
// (valid until the next read of the base); fn calls copyRecord once.
func (sp *splicer) records(fn func(path []byte) error) error {
	enc := sp.enc
	empty := false
	for {
		l, err := sp.line("header")
		if err != nil {
			return err
		}
		if string(l) == "  \"outputs\": [\n" {
			break
		}
		if string(l) == "  \"outputs\": []\n" {
			empty = true
			break
		}
	}
	const pathPrefix = `      "path": "`
	for !empty {
		l, err := sp.line("record")
		if err != nil {
			return err
		}
		if string(l) == "  ]\n" {
			break
		}
		if string(l) != "    {\n" {
			return fmt.Errorf("record %d: %w", enc.n, ErrNotSpliceable)
		}
		first, err := sp.line("record")
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(first, []byte(pathPrefix)) || !bytes.HasSuffix(first, []byte("\",\n")) {
			return fmt.Errorf("record %d: %w", enc.n, ErrNotSpliceable)
		}
		path := first[len(pathPrefix) : len(first)-3]
		if bytes.IndexByte(path, '\\') >= 0 {
			if path, err = jsontext.AppendUnquote(nil, first[len(pathPrefix)-1:len(first)-2]); err != nil {
				return fmt.Errorf("record %d: path: %w", enc.n, ErrNotSpliceable)
			}
		}
		sp.first, sp.copied = first, false
		if err := fn(path); err != nil {
			return err
		}
		if !sp.copied {
			return errors.New("splice: record not copied")
		}
		if enc.err != nil {
			return enc.err
		}
	}
	if l, err := sp.line("end"); err != nil || string(l) != "}\n" {
		if err != nil {
			return err
		}
		return fmt.Errorf("end: %w", ErrNotSpliceable)
	}
	if _, err := sp.r.ReadByte(); err != io.EOF {
		return fmt.Errorf("trailing data: %w", ErrNotSpliceable)
	}
	return nil
}

// copyRecord writes the rest of the current record, from its first line to
// its closing brace, to the encoder (keep) or skips it.
func (sp *splicer) copyRecord(keep bool) error {
	if sp.copied {
		return errors.New("splice: record copied twice")
	}
	sp.copied = true
	if keep {
		sp.enc.write(sp.first)
	}
	for {
		l, err := sp.line("record")
		if err != nil {
			return err
		}
		if string(l) == "    }\n" || string(l) == "    },\n" {
			if keep {
				sp.enc.writeString(closeRecord)
			}
			return nil
		}
		if keep {
			sp.enc.write(l)
		}
	}
}

// closeRecord ends a record in Encode's layout.
const closeRecord = "    }"
