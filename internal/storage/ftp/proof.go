package ftp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

// ProofError reports a server that lacks a behaviour the store relies on
// (see the package doc, "No trust without proof"). Nothing was written.
type ProofError struct {
	Root      string // the store, as String gives it (the store's errors start with it)
	Behaviour string // what the server does not do
	Setting   string // the usual server settings that cause it
	Err       error  // the server's answer, if it refused
}

func (e *ProofError) Error() string {
	msg := "the server does not " + e.Behaviour
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg + "; distributor relies on it to publish atomically and keep its catalog truthful, so nothing was written; " + e.Setting
}

// Unwrap returns the server's answer.
func (e *ProofError) Unwrap() error { return e.Err }

// What the proofs find missing, and the settings that usually cause it.
const (
	replace    = "replace an existing file in one step with a rename (RNFR/RNTO)"
	replaceFix = "ProFTPD needs AllowOverwrite on; Pure-FTPd must run without --norename (-G)"
	dots       = "list files whose names start with a dot"
	dotsFix    = "vsftpd needs force_dot_files=YES; Pure-FTPd needs --displaydotfiles (-D)"
)

// writable checks the store path p of a write, once the server's behaviour
// is proven.
func (s *Store) writable(ctx context.Context, p string) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if err := s.proven(ctx); err != nil {
		return err
	}
	if s.spaceless && (strings.HasSuffix(p, " ") || strings.Contains(p, " /")) {
		return fmt.Errorf("%w: %q has a name ending in a space, which this server rewrites (Pure-FTPd: to an underscore)", storage.ErrInvalidPath, p)
	}
	return nil
}

// proven proves the server's behaviour once per store, before its first
// write (see prove): a refusal is kept, a proof that could not run (the
// network failed) is tried again by the next write. A server whose MKD
// does not fail on an existing directory is noted for CreateNew.
func (s *Store) proven(ctx context.Context) error {
	s.proofMu.Lock()
	defer s.proofMu.Unlock()
	if s.proofDone {
		return s.proofErr
	}
	err := s.prove(ctx)
	var pe *ProofError
	if errors.As(err, &s.mkdLies) {
		err = nil
	} else if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("prove the server's behaviour: %w", err)
	}
	s.proofDone, s.proofErr = true, err
	return err
}

// prove checks on scratch names in the root (temporary names: a sweep
// removes what a cut proof leaves) that a rename replaces a file in one
// step, that a listing shows dotfiles (the scratch files are dotfiles), and
// that MKD of an existing directory fails; it notes whether a created
// name's trailing space is kept. It removes the scratch names again, and,
// when it refuses the server, the directories it made for the root. The lock's holder sweeps the root
// as another process proves (before it locks): a proof whose scratch file
// vanished starts over with new names, dirstore.CreateAttempts times at
// most, as a create whose temporary file vanished does.
func (s *Store) prove(ctx context.Context) error {
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	made, err := s.mkdirs(c, "x")
	defer func() {
		// A refused server keeps nothing, not even the root; a proven one
		// keeps the root it made for the write that follows: removed, it
		// would pull the directory from under another writer's proof.
		if err != nil {
			s.dirs.Undo(made, rmdir(c))
		}
		s.release(c)
	}()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		c, err = s.proveOnce(ctx, c)
		if !errors.Is(err, dirstore.ErrTempVanished) || attempt == dirstore.CreateAttempts {
			return err
		}
	}
}

// proveOnce is one proof of prove on new scratch names. A step that fails
// because its scratch file is gone (see vanished) fails with
// dirstore.ErrTempVanished, not as the server's refusal. It returns the
// connection to go on with (see cleanup).
func (s *Store) proveOnce(ctx context.Context, c *conn) (_ *conn, err error) {
	base := path.Join(s.root, storage.TempPrefix+"proof-"+rand.Text())
	a, b, d := base+"-a", base+"-b", base+"-d " // Pure-FTPd makes "-d_"
	defer func() {
		for _, f := range []string{a, b} {
			c = s.cleanup(ctx, c, func(c *conn) error { return c.sc.Delete(f) })
		}
		rmdir(c)(d)
	}()
	for _, f := range []string{a, b} {
		if err == nil {
			err = c.do(c.sc.Stor(f, strings.NewReader(f)))
		}
	}
	if err != nil {
		return c, err
	}
	if err := c.do(c.sc.Rename(b, a)); code(err) >= 500 {
		return c, vanished(c, b, &ProofError{s.String(), replace, replaceFix, err})
	} else if err != nil {
		return c, err
	}
	resp, err := c.sc.Retr(a)
	if err != nil {
		return c, vanished(c, a, c.do(err))
	}
	got, err := io.ReadAll(io.LimitReader(resp, int64(len(b)+1)))
	if err = c.do(errors.Join(err, resp.Close())); err != nil {
		return c, err
	} else if string(got) != b {
		return c, &ProofError{s.String(), replace, replaceFix,
			errors.New("the renamed file does not hold the new content")}
	}
	if err := c.do(c.sc.MakeDir(d)); err != nil {
		return c, err
	}
	entries, err := list(c, s.root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
		if strings.HasPrefix(e.Name, path.Base(base)+"-d") {
			d = path.Join(s.root, e.Name) // what the cleanup removes
		}
	}
	switch {
	case err != nil:
		return c, err
	case !slices.Contains(names, path.Base(a)):
		return c, vanished(c, a, &ProofError{s.String(), dots, dotsFix, nil})
	case slices.Contains(names, path.Base(b)):
		return c, &ProofError{s.String(), replace, replaceFix,
			errors.New("the renamed file is still listed")}
	}
	s.spaceless = !strings.HasSuffix(d, " ")
	if err := c.do(c.sc.MakeDir(base + "-d ")); err == nil {
		return c, &probe.UnenforcedError{Root: s.String(), Capability: probe.ExclusiveCreate,
			Detail: "MKD of an existing directory succeeded, so a second lock could be made over the first"}
	} else if code(err) == 0 {
		return c, err
	}
	return c, nil
}

// vanished is err, the failure of a step on the scratch or temporary file
// f, unless f is gone (SIZE refused: a concurrent writer holding the lock
// swept it), then dirstore.ErrTempVanished, with err only as text: what
// failed was no refusal by the server.
func vanished(c *conn, f string, err error) error {
	if _, serr := c.sc.FileSize(f); refused(serr) {
		return fmt.Errorf("%w (%v)", dirstore.ErrTempVanished, err)
	}
	return err
}
