package storage

import "errors"

// CallbackError carries an error returned by a List callback through an
// adapter's walk, so that List can return it to the caller unchanged.
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
