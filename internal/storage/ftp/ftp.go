// Package ftp implements storage.Store on a directory of an FTP server,
// plain or over TLS (FTPS, explicit or implicit), with
// github.com/jlaffaye/ftp, on the directory-store kit (dirstore).
//
// Connections: a pool of Options.Connections logged-in control
// connections, each used by one call at a time, each transfer on its own
// passive data connection (EPSV, else PASV). Every read and write of a
// connection must make progress within Options.IdleTimeout (its deadline
// moves before each), so a stalled server fails the call; the client takes
// no context, so a call whose context ends is cut by closing its
// connection storage.AnswerGrace later (dirstore.Watch). A connection whose
// call failed other than by the server's reply is discarded. With TLS the
// certificate is always verified (the system's roots and Options.CAFile,
// for Options.ServerName or the host), and each data connection resumes its
// control connection's TLS session, as vsftpd and ProFTPD require.
//
// Paths: store paths are joined to the root, an absolute path as the login
// sees it (a chroot). Names are bytes on the line: a path with a line
// break cannot be sent or listed, and storage.CheckPath refuses control
// characters. Listings use MLSD where the server offers it (Pure-FTPd,
// ProFTPD), else LIST after CWD (vsftpd; Unix listing lines), which shows
// dotfiles only where the server is set to. FTP cannot tell a symbolic link
// from its target: the server follows links as it is configured to; confine
// the account with a chroot.
//
// Writes: Put uploads to a temporary file storage.TempPrefix+random beside
// the target (creating missing parents with MKD) and renames it over the
// target (RNFR/RNTO): a reader sees the old file or the new one. A failed
// write removes its temporary file and the directories it created.
//
// No trust without proof: before its first write (Temp, CreateNew, Delete,
// a SweepTemp that removes) a Store proves on scratch names in the root
// that a rename replaces an existing file in one step, that a listing
// shows dotfiles, and that MKD of an existing directory fails. A server
// without one of the first two is refused with a *ProofError naming the
// usual setting, and nothing is written. The third is what exclusive
// creates rest on (below); where it fails, exclusive creates of a taken
// name fail with the *probe.UnenforcedError, which reaches the lock's
// exclusion proof, so that single_writer: true lets such a root be
// written, with a warning, as on every backend.
//
// Exclusive create (PutIf with the zero Version: the lock, its claims, the
// journal, a first catalog). FTP has no exclusive file create: STOR
// replaces, STOU picks its own name. But MKD of an existing directory
// fails, which the proof above checks. So an exclusive create of p
// first makes the guard directory g(p) = dir(p)/GuardPrefix+base(p) (in
// the reserved ".distributor" namespace, not a temporary name: SweepTemp
// never removes a guard, List never reports one). MKD failing because g
// exists means p is taken (storage.ErrPrecondition); so does a file p
// that a plain Put wrote (SIZE, after the MKD). Then the content goes to a
// temporary file beside p, renamed onto p. The name p exists from the
// guard's MKD until Delete removes it: Delete removes the file, then its
// guard. A read of a p whose guard exists but whose file does not (a
// creator between MKD and rename, one killed there, or a Delete killed
// between its two steps) answers an empty object, as SFTP's O_EXCL create
// shows mid-write; only a read that found the file missing asks (CWD g),
// so reads of existing files cost nothing extra. The lock takes such an
// unreadable record over only after it stayed unchanged for the holder's
// lease plus the skew allowance, through a claim that is itself an
// exclusive create: a guard orphaned by kill -9 delays the next writer by
// one lease, never forever, and two waiters cannot both take it over. A
// creator paused between MKD and rename that resumes after a takeover
// renames its record over the new holder's: its own fence had lapsed
// (counted from before the create), and the new holder's next renewal, a
// compare-and-swap, fails and fences the new holder.
//
// Versions are "sha256:" plus the hex SHA-256 of the content.
package ftp

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	ftplib "github.com/jlaffaye/ftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

// GuardPrefix starts the name of the directory that holds an exclusively
// created file's name (see the package doc).
const GuardPrefix = ".distributor-excl-"

// Options configure a Store. The ftp package reads no environment
// variables and no configuration: the caller passes everything here.
type Options struct {
	Host     string // server host name or IP address
	Port     int    // 0 means 21, or 990 with TLSImplicit
	User     string
	Password Secret
	// TLS is TLSExplicit (the default for ""), TLSImplicit or TLSNone.
	TLS string
	// CAFile is a PEM file of certificates to trust besides the system's.
	CAFile string
	// ServerName is the name the certificate must carry; "" means Host.
	ServerName string
	// Root is the absolute destination root on the server; a missing one
	// reads as empty, and the first write creates it with its parents.
	Root string
	// Connections is how many control connections the store keeps open
	// at most; 0 means 4.
	Connections int
	// DialTimeout bounds connecting, the TLS handshake and the login
	// together; 0 means 30 seconds.
	DialTimeout time.Duration
	// IdleTimeout is the progress deadline of every command and transfer:
	// a call fails when no byte moved on its connection for this long;
	// 0 means 30 seconds.
	IdleTimeout time.Duration
}

// Store is a storage.Store on a directory of an FTP server. It is safe for
// concurrent use by multiple goroutines.
type Store struct {
	opts  Options
	addr  string // host:port
	root  string // cleaned absolute path on the server
	roots *x509.CertPool
	pool  pool

	dirMu sync.Mutex
	dirs  map[string]bool // directories (server paths) known to exist

	// book: the directories (server paths, below the root) this store's
	// writes created or found in place, which decide what a cleanup may
	// remove.
	book dirstore.Book
	dw   dirstore.Writer

	proofMu   sync.Mutex
	proofDone bool
	proofErr  error                  // a refusal (*ProofError), kept
	mkdLies   *probe.UnenforcedError // MKD of an existing directory succeeded
	spaceless bool                   // the server rewrites a created name's trailing space
}

var _ storage.Store = (*Store)(nil)

// properties: FTP stages (a rename makes a staged file visible) and its
// exclusive creates rest on the server's MKD.
var properties = storage.Properties{Stage: true, Directories: true, Remote: true, ServerConditions: true}

// New checks opts and logs in once (bad credentials or an unverifiable
// certificate fail here, before anything is written); the connection
// goes to the pool. ctx and opts.DialTimeout bound it.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.TLS == "" {
		opts.TLS = TLSExplicit
	}
	if opts.Port == 0 {
		opts.Port = 21
		if opts.TLS == TLSImplicit {
			opts.Port = 990
		}
	}
	if opts.Connections <= 0 {
		opts.Connections = 4
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 30 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Second
	}
	s := &Store{
		opts: opts,
		addr: net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)),
		root: path.Clean(opts.Root),
		pool: pool{slots: make(chan struct{}, opts.Connections)},
		dirs: map[string]bool{},
	}
	s.dw = dirstore.Writer{FS: dirFS{s}, CompareFirst: true}
	if err := s.init(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	switch {
	case s.opts.Host == "":
		return errors.New("host is required")
	case s.opts.Port < 1 || s.opts.Port > 65535:
		return fmt.Errorf("port %d is out of range", s.opts.Port)
	case s.opts.User == "":
		return errors.New("user is required")
	case s.opts.TLS != TLSExplicit && s.opts.TLS != TLSImplicit && s.opts.TLS != TLSNone:
		return fmt.Errorf("tls %q is not explicit, implicit or none", s.opts.TLS)
	case !path.IsAbs(s.opts.Root):
		return fmt.Errorf("root %q must be an absolute path", s.opts.Root)
	case strings.ContainsFunc(s.opts.Root, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\\' }):
		return fmt.Errorf("root %q contains a control character or a backslash", s.opts.Root)
	}
	if s.opts.TLS != TLSNone {
		var err error
		if s.roots, err = loadRoots(s.opts.CAFile); err != nil {
			return err
		}
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	s.release(c)
	return nil
}

// String returns "ftp://user@host:port/root" (never the password).
func (s *Store) String() string { return "ftp://" + s.opts.User + "@" + s.addr + s.root }

// Close closes the connections; later calls fail matching os.ErrClosed.
func (s *Store) Close() error {
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	s.pool.shut = true
	for _, c := range s.pool.idle {
		c.sc.Quit()
		c.close()
	}
	s.pool.idle = nil
	return nil
}

// Properties implements storage.Store.
func (s *Store) Properties() storage.Properties { return properties }

// Sync implements storage.Store: writes are as durable as the server
// makes them when they return.
func (s *Store) Sync(context.Context) error { return nil }

func (s *Store) errorf(op, p string, err error) error {
	return fmt.Errorf("%s: %s %s: %w", s, op, p, err)
}

// full returns the server path of the store path p ("" is the root).
func (s *Store) full(p string) string {
	if p == "" {
		return s.root
	}
	return path.Join(s.root, p)
}

// below reports whether the server path p is strictly below the root.
func (s *Store) below(p string) bool {
	return p != s.root && strings.HasPrefix(p, strings.TrimSuffix(s.root, "/")+"/")
}

// guard is the guard directory of the server path p.
func guard(p string) string { return path.Join(path.Dir(p), GuardPrefix+path.Base(p)) }

// checkPath is storage.CheckPath, refusing guard names too.
func checkPath(p string) error {
	if err := storage.CheckPath(p); err != nil {
		return err
	}
	if strings.HasPrefix(path.Base(p), GuardPrefix) || strings.Contains(p, "/"+GuardPrefix) {
		return fmt.Errorf("%w: %q has a segment starting with %q (exclusive create guards)", storage.ErrInvalidPath, p, GuardPrefix)
	}
	return nil
}

// notExist is the error for a missing path, matching storage.ErrNotExist.
func notExist(p string, err error) error {
	return &fs.PathError{Op: "stat", Path: p, Err: fmt.Errorf("%w (%w)", storage.ErrNotExist, err)}
}

// isDir reports whether the server path dir is a directory: MLST where the
// server has it (Pure-FTPd delays every failed CWD that follows another),
// else CWD (vsftpd), each answered 250 or 550.
func isDir(c *conn, dir string) (bool, error) {
	var err error
	if c.mlst {
		var e *ftplib.Entry
		if e, err = c.sc.GetEntry(dir); err == nil {
			return e.Type == ftplib.EntryTypeFolder, nil
		}
	} else {
		err = c.sc.ChangeDir(dir)
	}
	if err = c.do(err); code(err) >= 500 {
		return false, nil
	}
	return err == nil, err
}

// Get implements storage.Store: it reads a file whole and returns its
// Version.
func (s *Store) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	f, err := s.dw.FS.OpenFile(ctx, p, true)
	if err != nil {
		return nil, "", s.errorf("get", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return nil, "", s.errorf("get", p, err)
	}
	return data, dirstore.ContentVersion(data), nil
}

// ReadVersioned implements storage.Store (see dirstore.Writer).
func (s *Store) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	return s.dw.ReadVersioned(ctx, p, fn)
}

// Open implements storage.Store: each Read checks ctx.
func (s *Store) Open(ctx context.Context, p string) (io.ReadCloser, error) { return s.dw.Open(ctx, p) }

// Stat implements storage.Store: MLST where the server offers it, else
// SIZE and MDTM.
func (s *Store) Stat(ctx context.Context, p string) (storage.Info, error) {
	info, err := s.stat(ctx, p)
	if err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	return info, nil
}

func (s *Store) stat(ctx context.Context, p string) (storage.Info, error) {
	if err := checkPath(p); err != nil {
		return storage.Info{}, err
	}
	c, end, err := s.session(ctx)
	if err != nil {
		return storage.Info{}, err
	}
	defer end()
	full := s.full(p)
	info := storage.Info{Path: p}
	if c.mlst {
		e, err := c.sc.GetEntry(full)
		if err == nil && e.Type != 0 {
			return storage.Info{}, &fs.PathError{Op: "stat", Path: p, Err: fmt.Errorf("%w: %w (a %s is not an object)", storage.ErrNotObject, storage.ErrNotExist, e.Type)}
		} else if err == nil {
			info.Size, info.ModTime = int64(e.Size), e.Time
		}
		return s.orGuard(c, p, info, c.do(err))
	}
	size, err := c.sc.FileSize(full)
	if err == nil && c.sc.IsGetTimeSupported() {
		info.ModTime, err = c.sc.GetTime(full)
	}
	info.Size = size
	return s.orGuard(c, p, info, c.do(err))
}

// orGuard returns info for a read of p that failed with err: a refusal
// with p's guard in place is the empty object (see the package doc).
func (s *Store) orGuard(c *conn, p string, info storage.Info, err error) (storage.Info, error) {
	if !refused(err) {
		return info, err
	}
	if held, gerr := isDir(c, guard(s.full(p))); gerr != nil || !held {
		return storage.Info{}, cmpErr(gerr, notExist(p, err))
	}
	return storage.Info{Path: p}, nil
}

// Delete implements storage.Store: DELE, then RMD of the guard (see the
// package doc), then the directories left empty that the store may remove;
// a missing path or a directory is left alone.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := s.delete(ctx, p); err != nil {
		return s.errorf("delete", p, err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, p string) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if err := s.proven(ctx); err != nil {
		return err
	}
	c, end, err := s.session(ctx)
	if err != nil {
		return err
	}
	defer end()
	if err := ctx.Err(); err != nil {
		return err
	}
	full := s.full(p)
	derr := c.do(c.sc.Delete(full))
	if derr != nil && !refused(derr) {
		return derr
	}
	gerr := c.do(c.sc.RemoveDir(guard(full)))
	if gerr != nil && !refused(gerr) {
		return gerr
	}
	if derr == nil || gerr == nil {
		s.prune(c, path.Dir(full), false)
	}
	return nil
}
