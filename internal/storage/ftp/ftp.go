// Package ftp implements storage.Store on a directory of an FTP server,
// plain or over TLS (FTPS, explicit or implicit), with github.com/jlaffaye/ftp,
// on the directory-store kit (dirstore).
//
// Connections: a pool of Options.Connections logged-in control connections,
// each used by one call at a time, each transfer on a passive data
// connection (EPSV, else PASV). Every read and write on a connection must
// make progress within Options.IdleTimeout, so a stalled server fails the
// call; the client takes no context, so a call whose context ends is cut by
// closing its connection storage.AnswerGrace later (dirstore.Watch). A
// connection whose call failed other than by the server's reply is
// discarded. The certificate is always verified (system roots and
// Options.CAFile, for Options.ServerName or the host), and each data
// connection resumes its control connection's TLS session, as vsftpd and
// ProFTPD require.
//
// Paths are joined to the root, an absolute path as the login sees it.
// Listings use MLSD where the server has it (Pure-FTPd, ProFTPD), else CWD
// and LIST (vsftpd: Unix listing lines, so a name with a line break could
// not be listed; storage.CheckPath refuses control characters). FTP cannot
// tell a symbolic link from its target: confine the account with a chroot.
// Pure-FTPd writes a created name's trailing space as "_": where the proofs
// find that, writes refuse such names.
//
// Writes: Put uploads to a temporary file storage.TempPrefix+random beside
// the target (MKD of missing parents) and renames it over the target
// (RNFR/RNTO): a reader sees the old file or the new one. PutCreate looks,
// then renames (safe under the destination lock); PutIfVersion compares,
// then writes (one transfer per connection at a time); a staged write's
// connection goes back to the pool until Commit. A failed write
// removes its temporary file and the directories it made.
//
// No trust without proof: before its first write (Temp, CreateNew, Delete,
// a SweepTemp that removes) a Store proves on scratch names in the root that
// a rename replaces a file in one step, that listings show dotfiles and that
// MKD of an existing directory fails. A server without one of the first two
// is refused with a *ProofError, and nothing is written. Where MKD does not
// fail, exclusive creates of a taken name fail with a *probe.UnenforcedError,
// which the lock's exclusion proof passes on: single_writer: true lets such
// a root be written, with a warning, as on every backend.
//
// Exclusive create (PutIf with the zero Version: the lock, its claims, the
// journal, a first catalog). FTP has no exclusive file create: STOR
// replaces, STOU picks its own name. But MKD of an existing directory fails,
// as the proofs check. So an exclusive create of p first makes the guard
// directory g(p) = dir(p)/GuardPrefix+base(p), in the reserved
// ".distributor" namespace (not a temporary name: SweepTemp never removes a
// guard, List never shows one). MKD failing because g exists means p is
// taken (storage.ErrPrecondition), as does a file p a plain Put wrote (SIZE,
// after the MKD). Then the content goes to a temporary file renamed onto p.
// The name p exists from the guard's MKD until Delete, which removes the
// file, then its guard. A read of a p whose guard exists but whose file does
// not (a creator between MKD and rename, or killed there, or a Delete killed
// between its two steps) answers an empty object, as SFTP's O_EXCL create
// shows mid-write; only a read that found the file missing asks (CWD or
// MLST of g), so reads of existing files cost nothing extra. The lock takes
// such an unreadable record over only after it stayed unchanged for the
// holder's lease plus the skew allowance, through a claim that is itself an
// exclusive create: a guard orphaned by kill -9 delays the next writer by
// one lease, never forever, and two waiters cannot both take over. A
// creator paused between MKD and rename that resumes after a takeover
// renames its record over the new holder's: its own fence had lapsed
// (counted from before the create), and the new holder's next renewal, a
// compare-and-swap, fails and fences the new holder.
//
// Versions are "sha256:" plus the hex SHA-256 of the content.
package ftp

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
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
	TLS      string // TLSExplicit (the default for ""), TLSImplicit or TLSNone
	CAFile   string // a PEM file of certificates to trust besides the system's
	// ServerName is the name the certificate must carry; "" means Host.
	ServerName string
	// Root is the absolute destination root on the server; a missing one
	// reads as empty, and the first write creates it with its parents.
	Root        string
	Connections int           // control connections at most; 0 means 4
	DialTimeout time.Duration // bounds connecting, TLS and login; 0 means 30s
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
	dirs  dirstore.Dirs // known directories, and those the store's writes made

	dirstore.Writer // Put, Stage, the reads, List and SweepTemp on dirFS

	proofMu   sync.Mutex
	proofDone bool
	proofErr  error                  // a refusal (*ProofError), kept
	mkdLies   *probe.UnenforcedError // MKD of an existing directory succeeded
	spaceless bool                   // a created name's trailing space is rewritten
}

var _ storage.Store = (*Store)(nil)

// properties: FTP stages (a rename makes a staged file visible) and its
// exclusive creates rest on the server's MKD.
var properties = storage.Properties{Stage: true, Directories: true, Remote: true, ServerConditions: true}

// New checks opts and logs in once (bad credentials or an unverifiable
// certificate fail here, before anything is written); ctx and
// opts.DialTimeout bound it.
func New(ctx context.Context, opts Options) (*Store, error) {
	opts.TLS = cmp.Or(opts.TLS, TLSExplicit)
	if opts.Port == 0 {
		opts.Port = 21
		if opts.TLS == TLSImplicit {
			opts.Port = 990
		}
	}
	opts.Connections = cmp.Or(max(opts.Connections, 0), 4) // (zero or negative: the default)
	opts.DialTimeout = cmp.Or(max(opts.DialTimeout, 0), 30*time.Second)
	opts.IdleTimeout = cmp.Or(max(opts.IdleTimeout, 0), 30*time.Second)
	s := &Store{opts: opts, addr: net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)), root: path.Clean(opts.Root),
		pool: pool{slots: make(chan struct{}, opts.Connections)}}
	s.dirs.Root = s.root
	s.Writer = dirstore.Writer{FS: dirFS{s}, GetWhole: true, CompareFirst: true}
	if err := s.init(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) (err error) {
	switch {
	case s.opts.Host == "" || s.opts.User == "":
		return errors.New("host and user are required")
	case s.opts.Port < 1 || s.opts.Port > 65535:
		return fmt.Errorf("port %d is out of range", s.opts.Port)
	case s.opts.TLS != TLSExplicit && s.opts.TLS != TLSImplicit && s.opts.TLS != TLSNone:
		return fmt.Errorf("tls %q is not explicit, implicit or none", s.opts.TLS)
	case !path.IsAbs(s.opts.Root):
		return fmt.Errorf("root %q must be an absolute path", s.opts.Root)
	case strings.ContainsFunc(s.opts.Root, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\\' }):
		return fmt.Errorf("root %q contains a control character or a backslash", s.opts.Root)
	}
	if s.opts.TLS != TLSNone { // the system's certificate pool, with CAFile's
		if s.roots, err = x509.SystemCertPool(); err != nil {
			s.roots = x509.NewCertPool()
		}
		if s.opts.CAFile != "" {
			pem, err := os.ReadFile(s.opts.CAFile)
			if err != nil {
				return fmt.Errorf("read ca_file: %w", err)
			}
			if !s.roots.AppendCertsFromPEM(pem) {
				return fmt.Errorf("ca_file %s holds no PEM certificate", s.opts.CAFile)
			}
		}
	}
	c, err := s.acquire(ctx)
	if err == nil {
		s.release(c)
	}
	return err
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

// IsTransient implements storage.Store. Never transient: storage.IsPermanent,
// a failed proof, a 5xx reply. Transient: a 4xx reply ("try again": 421,
// 425, 426, 450, 451, 452) and storage.IsTransient's (a reset, EOF, a timeout).
func (s *Store) IsTransient(err error) bool {
	var (
		pe *ProofError
		ue *probe.UnenforcedError
	)
	if err == nil || storage.IsPermanent(err) || errors.As(err, &pe) || errors.As(err, &ue) {
		return false
	}
	if c := code(err); c != 0 {
		return c >= 400 && c < 500
	}
	return storage.IsTransient(err)
}

// full returns the server path of the store path p ("" is the root).
func (s *Store) full(p string) string { return path.Join(s.root, p) }

// guard is the guard directory of the server path p.
func guard(p string) string { return path.Join(path.Dir(p), GuardPrefix+path.Base(p)) }

// checkPath is storage.CheckPath, refusing guard names too.
func checkPath(p string) error {
	if err := storage.CheckPath(p); err != nil {
		return err
	}
	if strings.HasPrefix(p, GuardPrefix) || strings.Contains(p, "/"+GuardPrefix) {
		return fmt.Errorf("%w: %q has a segment starting with %q (exclusive create guards)", storage.ErrInvalidPath, p, GuardPrefix)
	}
	return nil
}

// isDir reports whether the server path dir is a directory: MLST where the
// server has it (Pure-FTPd delays each failed CWD after another), else CWD.
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

// Stat implements storage.Store: MLST where the server has it, else SIZE
// and MDTM.
func (s *Store) Stat(ctx context.Context, p string) (_ storage.Info, err error) {
	defer dirstore.Wrap(s.FS, "stat", p, &err)
	if err := checkPath(p); err != nil {
		return storage.Info{}, err
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return storage.Info{}, err
	}
	defer s.release(c)
	full, info := s.full(p), storage.Info{Path: p}
	var e *ftplib.Entry
	if c.mlst {
		if e, err = c.sc.GetEntry(full); err == nil && e.Type != ftplib.EntryTypeFile {
			return storage.Info{}, &fs.PathError{Op: "stat", Path: p,
				Err: fmt.Errorf("%w: %w (a %s)", storage.ErrNotObject, storage.ErrNotExist, e.Type)}
		} else if err == nil {
			info.Size, info.ModTime = int64(e.Size), e.Time
		}
	} else if info.Size, err = c.sc.FileSize(full); err == nil && c.sc.IsGetTimeSupported() {
		info.ModTime, err = c.sc.GetTime(full)
	}
	if info, err = s.orGuard(c, p, info, c.do(err)); err != nil {
		return storage.Info{}, err
	}
	return info, nil
}

// orGuard returns info for a read of p that failed with err: a refusal
// with p's guard in place is the empty object (see the package doc).
func (s *Store) orGuard(c *conn, p string, info storage.Info, err error) (storage.Info, error) {
	if !refused(err) {
		return info, err
	}
	if held, gerr := isDir(c, guard(s.full(p))); gerr != nil || !held {
		return storage.Info{}, cmp.Or[error](gerr, &fs.PathError{Op: "stat", Path: p, Err: fmt.Errorf("%w (%w)", storage.ErrNotExist, err)})
	}
	return storage.Info{Path: p}, nil
}

// Delete implements storage.Store: DELE, then RMD of the guard (see the
// package doc), then the directories left empty that the store may remove;
// a missing path or a directory is left alone.
func (s *Store) Delete(ctx context.Context, p string) (err error) {
	defer dirstore.Wrap(s.FS, "delete", p, &err)
	if err := checkPath(p); err != nil {
		return err
	}
	if err := s.proven(ctx); err != nil {
		return err
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.release(c)
	if err := ctx.Err(); err != nil {
		return err
	}
	full := s.full(p)
	derr := c.do(c.sc.Delete(full))
	gerr := c.do(c.sc.RemoveDir(guard(full)))
	for _, err := range []error{derr, gerr} {
		if err != nil && !refused(err) {
			return err
		}
	}
	if derr == nil || gerr == nil {
		s.dirs.Prune(path.Dir(full), true, false, rmdir(c))
	}
	return nil
}

// Walk implements dirstore.FS: one listing per directory, each on a
// connection of the pool (List's fn runs without one); a sweep that
// removes proves the server first.
func (d dirFS) Walk(ctx context.Context, removes bool) (dirstore.Tree, func(), error) {
	if removes {
		if err := d.proven(ctx); err != nil {
			return nil, nil, err
		}
	}
	return dir{d.Store, d.root}, func() {}, nil
}

// dir is the store's directory tree as dirstore.ListTree and
// dirstore.SweepTree walk it, and its directory at the server path path.
type dir struct {
	s    *Store
	path string
}

// OpenDir implements dirstore.Tree: a missing directory shows as such in
// its listing.
func (d dir) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	return dir{d.s, d.s.full(p)}, nil
}

// PruneDir implements dirstore.Tree (see dirstore.Dirs.Prune).
func (d dir) PruneDir(ctx context.Context, p string, parents bool) {
	c, err := d.s.acquire(ctx)
	if err != nil {
		return
	}
	defer d.s.release(c)
	d.s.dirs.Prune(d.s.full(p), parents, false, rmdir(c))
}

// Entries implements dirstore.TreeDir: MLSD, or CWD and LIST. Guards are
// left out; one whose file is missing shows as that file, empty (as a
// read sees it).
func (d dir) Entries(ctx context.Context, prefix string) ([]fs.FileInfo, error) {
	c, err := d.s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer d.s.release(c)
	entries, err := list(c, d.path)
	if refused(err) {
		return nil, fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	} else if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var guarded []fs.FileInfo
	fis := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		name := e.Name
		seen[name] = true
		switch {
		case name == "." || name == ".." || name == "" || strings.Contains(name, "/"):
		case strings.HasPrefix(name, GuardPrefix):
			if name = strings.TrimPrefix(name, GuardPrefix); strings.HasPrefix(name, prefix) {
				guarded = append(guarded, info{&ftplib.Entry{Name: name, Time: e.Time}})
			}
		case strings.HasPrefix(name, prefix):
			fis = append(fis, info{e})
		}
	}
	for _, g := range guarded {
		if !seen[g.Name()] {
			fis = append(fis, g)
		}
	}
	return fis, nil
}

// list lists the server directory dir: MLSD, or CWD and LIST (whose
// argument some servers read as a pattern and options).
func list(c *conn, dir string) ([]*ftplib.Entry, error) {
	if c.mlst {
		entries, err := c.sc.List(dir)
		return entries, c.do(err)
	}
	if err := c.do(c.sc.ChangeDir(dir)); err != nil {
		return nil, err
	}
	entries, err := c.sc.List("")
	return entries, c.do(err)
}

func (d dir) Sub(_ context.Context, name string) (dirstore.TreeDir, error) {
	return dir{d.s, path.Join(d.path, name)}, nil
}

func (d dir) Remove(ctx context.Context, name string) error {
	c, err := d.s.acquire(ctx)
	if err != nil {
		return err
	}
	defer d.s.release(c)
	if err := c.do(c.sc.Delete(path.Join(d.path, name))); err != nil && !refused(err) {
		return err
	}
	return nil
}

func (dir) Close() {}

// info is a listed entry as an fs.FileInfo.
type info struct{ e *ftplib.Entry }

func (i info) Name() string       { return i.e.Name }
func (i info) Size() int64        { return int64(i.e.Size) }
func (i info) ModTime() time.Time { return i.e.Time }
func (i info) IsDir() bool        { return i.e.Type == ftplib.EntryTypeFolder }
func (i info) Sys() any           { return nil }

func (i info) Mode() fs.FileMode {
	switch i.e.Type {
	case ftplib.EntryTypeFolder:
		return fs.ModeDir | 0o755
	case ftplib.EntryTypeLink:
		return fs.ModeSymlink | 0o777
	}
	return 0o644
}
