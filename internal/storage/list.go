package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CallbackError carries an error returned by a List (or RewriteIf)
// callback through an adapter's walk, so that List can return it to the
// caller unchanged.
type CallbackError struct{ Err error }

func (e *CallbackError) Error() string { return e.Err.Error() }

// Unwrap returns the callback's error.
func (e *CallbackError) Unwrap() error { return e.Err }

// ListResult is what an adapter's List returns for the error err of its
// walk: the callback's own error unchanged (List contract), any other
// error through wrap (which adds the store and the prefix), nil for nil.
func ListResult(err error, wrap func(error) error) error {
	var ce *CallbackError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.Err
	default:
		return wrap(err)
	}
}

// SortListing sorts the objects an object store listed by path, byte-wise
// (the List contract's order, which a server's may not be), and refuses a
// listing that names a path twice: such a listing cannot be trusted.
func SortListing(infos []Info) ([]Info, error) {
	byPath := func(a, b Info) int { return strings.Compare(a.Path, b.Path) }
	if !slices.IsSortedFunc(infos, byPath) { // servers mostly list in order: one pass checks it
		slices.SortFunc(infos, byPath)
	}
	for i := 1; i < len(infos); i++ {
		if infos[i].Path == infos[i-1].Path {
			return nil, fmt.Errorf("the server listed %q twice: the listing cannot be trusted", infos[i].Path)
		}
	}
	return infos, nil
}
