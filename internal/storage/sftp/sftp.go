// Package sftp implements storage.Store on a directory of an SFTP server,
// over SSH (golang.org/x/crypto/ssh and github.com/pkg/sftp).
//
// Connection: one SSH connection per Store, opened by New and shared by every
// call (the Store is safe for concurrent use), with one SFTP session, and more
// while writes overlap (up to 4, which the server serves in parallel: see
// conn.session); after a break the next call reconnects. Options.DialTimeout
// bounds a connection attempt; a keepalive (Options.KeepaliveInterval,
// KeepaliveTimeout) closes a connection to a dead, stalled or partitioned
// server, so no request waits forever on it.
//
// The server's host key is always checked against Options.KnownHostsFile:
// an unknown, changed or revoked key fails with a *HostKeyError naming the
// host and the offered key's SHA256 fingerprint, and nothing is sent.
// Authentication is by public key: the identity file and/or the keys of an
// ssh agent.
//
// Paths must be clean relative slash-separated paths none of whose segments
// starts with storage.TempPrefix (else storage.ErrInvalidPath); joined to
// the root they cannot name anything outside it. The server would follow
// symbolic links anywhere in a path, so before acting every operation checks
// each parent directory of its path with Lstat (once per Store: directories
// verified, or created, are remembered until the Store removes them), and
// behaves like the local backend:
//
//   - A path whose parent directory is a symbolic link, or is not a
//     directory, does not exist for readers (Open, Get, Stat, List, the
//     compare of PutIfVersion), Delete leaves it alone without error, and writers
//     (Put, PutIfVersion) refuse it with an error matching storage.ErrInvalidPath
//     (symbolic link) or a "not a directory" error.
//   - A final segment that is a symbolic link is not an object: readers
//     report storage.ErrNotExist, Put replaces the link itself, PutIfVersion with
//     the zero Version sees the name as taken, Delete removes the link.
//   - List and SweepTemp never descend into a linked directory.
//
// The checks and the request that follows are two steps: a link planted by
// someone else in between, or in place of a directory this Store already
// verified, is followed. For a hard boundary against such links confine the
// account on the server (ChrootDirectory).
//
// Writes: Put streams to a temporary file storage.TempPrefix+random in the
// target's directory, fsyncs it when the server offers fsync@openssh.com, and
// renames it over the target with posix-rename@openssh.com (required by New):
// a reader sees the old file or the new one. With PutCreate the complete
// temporary file is hard-linked to the name; without a usable
// hardlink@openssh.com (see conn.linkUnsupported) a look, then the rename
// (safe under the destination lock). With PutIfVersion the current object is
// hashed while the new one uploads. A failed Put removes its temporary
// file and the directories it created. Files get the server's default mode (for
// OpenSSH see internal-sftp -u). Versions are "sha256:" plus the hex SHA-256.
//
// Contexts: every call checks its context first and again just before its
// committing request (rename, link or remove); Put checks it between 1 MiB
// chunks, List between directories, Open's reader on every Read. A call still
// blocked storage.AnswerGrace after a cancel closes the connection (see watch).
package sftp

import (
	"bufio"
	"context"
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

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Options configure a Store. The sftp package reads no environment
// variables and no configuration: the caller passes everything here.
type Options struct {
	Host string // server host name or IP address
	Port int    // 0 means 22
	User string
	// IdentityFile is an unencrypted private key file (OpenSSH or PEM), or "";
	// a passphrase-protected key works only through the agent.
	IdentityFile string
	// AgentSocket is an ssh agent's socket (SSH_AUTH_SOCK), or "" for none.
	// At least one of IdentityFile and AgentSocket must be set.
	AgentSocket string
	// KnownHostsFile is the known_hosts file (OpenSSH format) holding the
	// server's host key. Required: host keys are always verified.
	KnownHostsFile string
	// Root is the absolute destination root on the server; a missing one
	// reads as empty, and the first write creates it with its parents.
	Root string
	// DialTimeout bounds connecting, the SSH handshake and the SFTP
	// session's start together (a silent server fails); 0 means 30 seconds.
	DialTimeout time.Duration
	// KeepaliveInterval is the pause between the keepalive@openssh.com
	// requests that probe a connected server; 0 means 15 seconds.
	KeepaliveInterval time.Duration
	// KeepaliveTimeout is how long a keepalive may go unanswered, with no
	// other byte from the server, before the connection is closed (requests
	// in flight fail, the next call reconnects); 0 means 15 seconds. A dead
	// server is detected within about KeepaliveInterval + KeepaliveTimeout.
	KeepaliveTimeout time.Duration
}

// Store is a storage.Store on a directory of an SFTP server. It is safe for
// concurrent use by multiple goroutines.
type Store struct {
	opts     Options
	addr     string // host:port
	root     string // cleaned absolute path on the server
	signer   ssh.Signer
	hostKeys *hostKeys

	mu     sync.Mutex // guards conn and closed; held while connecting
	conn   *conn
	closed bool

	// dirs: the directories (server paths) known to exist, none a link, and
	// those this store's writes created or found in place, which decide what
	// a cleanup may remove.
	dirs dirstore.Dirs

	dirstore.Writer // Put, Stage, the reads, List and SweepTemp on dirFS
}

var _ storage.Store = (*Store)(nil)

// New checks opts, reads the identity and known_hosts files and connects. An
// unknown or changed host key fails here, before anything is written (*HostKeyError).
// ctx and opts.DialTimeout bound the connection (a timeout matches
// context.DeadlineExceeded); later calls reconnect with their own context.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Port == 0 {
		opts.Port = 22
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 30 * time.Second
	}
	if opts.KeepaliveInterval <= 0 {
		opts.KeepaliveInterval = 15 * time.Second
	}
	if opts.KeepaliveTimeout <= 0 {
		opts.KeepaliveTimeout = 15 * time.Second
	}
	s := &Store{
		opts: opts,
		addr: net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)),
		root: path.Clean(opts.Root),
	}
	s.dirs.Root = s.root
	s.FS = dirFS{s}
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
	case !path.IsAbs(s.opts.Root):
		return fmt.Errorf("root %q must be an absolute path", s.opts.Root)
	case strings.ContainsFunc(s.opts.Root, func(r rune) bool { return r < ' ' || r == '\\' }):
		return fmt.Errorf("root %q contains a control character or a backslash", s.opts.Root)
	}
	var err error
	if s.hostKeys, err = loadHostKeys(s.opts.KnownHostsFile); err != nil {
		return err
	}
	if s.signer, err = loadIdentity(&s.opts); err != nil {
		return err
	}
	_, err = s.client(ctx)
	return err
}

// String returns "sftp://user@host:port/root".
func (s *Store) String() string {
	return "sftp://" + s.opts.User + "@" + s.addr + s.root
}

// Close closes the connection; later calls fail matching os.ErrClosed; closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conn
	s.closed, s.conn = true, nil
	if c == nil {
		return nil
	}
	return c.close()
}

// full returns the server path of the store path p ("" is the root).
func (s *Store) full(p string) string {
	if p == "" {
		return s.root
	}
	return path.Join(s.root, p)
}

// missing is err, or if it matches storage.ErrNotExist that error for the store path p.
func missing(p string, err error) error {
	if errors.Is(err, storage.ErrNotExist) {
		return &fs.PathError{Op: "stat", Path: p, Err: storage.ErrNotExist}
	}
	return err
}

func (s *Store) openSized(c *conn, p string) (*sftplib.File, int64, error) {
	if _, err := s.lstat(c, p, true); err != nil {
		return nil, 0, err
	}
	f, err := c.sftp.Open(s.full(p))
	if err != nil {
		return nil, 0, missing(p, err)
	}
	// Lstat and Open are two steps: check what was opened.
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = dirstore.NotObject("stat", p, fi)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// lstat validates p and returns the Lstat of the entry there (with regular,
// only of a regular file); a path missing, not a regular file, or below
// something that is not a plain directory (a symbolic link, a file) yields an
// error matching storage.ErrNotExist.
func (s *Store) lstat(c *conn, p string, regular bool) (fs.FileInfo, error) {
	if err := storage.CheckPath(p); err != nil {
		return nil, err
	}
	if _, err := s.walkParents(c, p, false); err != nil {
		// A missing parent, or one that is not a plain directory, makes p missing.
		if h := (*dirstore.HiddenError)(nil); errors.As(err, &h) {
			return nil, h.Missing("stat")
		}
		return nil, missing(p, err)
	}
	fi, err := c.sftp.Lstat(s.full(p))
	if s.belowFile(c, p, err) {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: fmt.Errorf("%w (a parent is not a directory)", storage.ErrNotExist)}
	} else if err != nil {
		return nil, missing(p, err)
	}
	if regular && !fi.Mode().IsRegular() {
		return nil, dirstore.NotObject("stat", p, fi)
	}
	return fi, nil
}

// belowFile reports whether err, of a request on the store path p, is
// what some servers answer for a path below a regular file (ENOTDIR): a
// generic failure, and some parent of p is indeed missing or no directory.
func (s *Store) belowFile(c *conn, p string, err error) bool {
	var se *sftplib.StatusError
	if !errors.As(err, &se) || se.FxCode() != sftplib.ErrSSHFxFailure {
		return false
	}
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		fi, err := c.sftp.Lstat(s.full(strings.Join(segs[:i], "/")))
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
			return true
		}
	}
	return false
}

// Stat implements storage.Store: it describes a regular file.
func (s *Store) Stat(ctx context.Context, p string) (_ storage.Info, err error) {
	defer dirstore.Wrap(s.FS, "stat", p, &err)
	if err := storage.CheckPath(p); err != nil {
		return storage.Info{}, err
	}
	c, err := s.client(ctx)
	if err != nil {
		return storage.Info{}, err
	}
	defer watch(ctx, c)()
	fi, err := s.lstat(c, p, true)
	if err != nil {
		return storage.Info{}, err
	}
	return storage.Info{Path: p, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete implements storage.Store. It removes the regular file or symbolic link
// (never its target) at p, then prunes the emptied directories; a missing path,
// a directory or a path below a symbolic link or a file is left alone.
func (s *Store) Delete(ctx context.Context, p string) (err error) {
	defer dirstore.Wrap(s.FS, "delete", p, &err)
	if err := storage.CheckPath(p); err != nil {
		return err
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	switch fi, err := s.lstat(c, p, false); {
	case errors.Is(err, fs.ErrNotExist), err == nil && fi.IsDir():
		return nil // nothing below a link (or a file) is touched
	case err != nil:
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.sftp.Remove(s.full(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s.dirs.Prune(path.Dir(s.full(p)), true, false, c.sftp.RemoveDirectory)
	return nil
}

// readBuffer is the read size of a file read whole (ReadVersioned, the
// compare of PutIfVersion): the client splits a read this large into concurrent
// requests, so a large object streams at the link's speed.
const readBuffer = 1 << 20

// OpenFile implements dirstore.FS: each Read checks ctx, and Close stops
// watching it. A file read whole is read in reads of up to readBuffer bytes.
func (d dirFS) OpenFile(ctx context.Context, p string, whole bool) (io.ReadCloser, error) {
	c, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	stop := watch(ctx, c)
	f, size, err := d.openSized(c, p)
	if err != nil {
		stop()
		return nil, err
	}
	r := io.Reader(f)
	if whole { // no larger than the file needs: a small file takes one request
		r = bufio.NewReaderSize(f, int(min(max(size+1, 4096), readBuffer)))
	}
	return &reader{Reader: storage.ContextReader(ctx, r), f: f, stop: stop}, nil
}

// reader is the io.ReadCloser OpenFile returns.
type reader struct {
	io.Reader
	f    *sftplib.File
	stop func()
}

// Close closes the file, and then stops the watch: a close request a
// stalled server does not answer is cut storage.AnswerGrace after a cancel too.
func (r *reader) Close() error {
	err := r.f.Close()
	r.stop()
	return err
}

// CreateNew implements dirstore.FS, the exclusive create without a usable
// hardlink@openssh.com (see conn.linkUnsupported): O_EXCL on the target, then the
// content in place. The exclusion probe's second create goes through it too, so
// a server that ignores O_EXCL is refused before a writer trusts it.
func (d dirFS) CreateNew(ctx context.Context, p string, src *dirstore.DigestSource) error {
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	s := d.Store
	created, err := s.mkdirs(c, p)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		s.dirs.Undo(created, c.sftp.RemoveDirectory)
		return err
	}
	target := s.full(p)
	f, err := createExcl(c.sftp, target)
	// A name not there at the look (its holder released it between the create
	// and the look, as a lock is) lost a race: try again.
	for attempt := 1; err != nil && attempt < 5 && !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrPermission); attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		f, err = createExcl(c.sftp, target)
	}
	if err != nil {
		s.dirs.Undo(created, c.sftp.RemoveDirectory)
		return err
	}
	err = src.CopyTo(ctx, f)
	if err == nil && c.fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.sftp.Remove(target)
		s.dirs.Undo(created, c.sftp.RemoveDirectory)
	}
	return err
}
