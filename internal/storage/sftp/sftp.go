// Package sftp implements storage.Store on a directory of an SFTP server,
// over SSH (golang.org/x/crypto/ssh and github.com/pkg/sftp).
//
// Connection: one SSH connection and one SFTP session per Store, opened by
// New and shared by every call (the Store is safe for concurrent use). If
// the connection breaks, the next call reconnects. The server's host key is
// always checked against Options.KnownHostsFile: an unknown, changed or
// revoked key fails with a *HostKeyError naming the host and the offered
// key's SHA256 fingerprint, and nothing is sent. Authentication is by public
// key: the identity file and/or the keys of an ssh agent.
//
// Paths must be clean relative slash-separated paths none of whose segments
// starts with storage.TempPrefix (else storage.ErrInvalidPath); joined to
// the root they cannot name anything outside it. Writers refuse a parent
// directory that is a symbolic link (storage.ErrInvalidPath) and never
// follow a link at the final segment: Put replaces the link itself, PutIf
// with the zero Version sees the name as taken, Delete removes the link.
// Readers treat a final segment that is not a regular file as missing and
// List does not descend into linked directories; the server resolves the
// parent directories of a read, so for a hard boundary against links planted
// by others confine the account on the server (ChrootDirectory).
//
// Writes: Put streams to a temporary file storage.TempPrefix+random in the
// target's directory, fsyncs it when the server offers fsync@openssh.com,
// and renames it over the target with posix-rename@openssh.com (New fails if
// the server lacks that extension). A reader sees the old file or the new
// one, and a failed Put removes its temporary file and the directories it
// created. Files get the server's default mode (the account's umask; for
// OpenSSH see internal-sftp -u). Versions are "sha256:" plus the hex SHA-256
// of the content, as for the local backend.
//
// Contexts: every call checks its context first, Put checks it between
// 1 MiB chunks, List between directories and Open's reader on every Read.
// SFTP requests cannot be cancelled one by one: when a context is cancelled
// and the call is still blocked abortGrace later, the store closes the
// connection (other calls in flight fail; the next call reconnects).
package sftp

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Options configure a Store. The sftp package reads no environment
// variables and no configuration: the caller passes everything here.
type Options struct {
	Host string // server host name or IP address
	Port int    // 0 means 22
	User string
	// IdentityFile is the path of an unencrypted private key (OpenSSH or
	// PEM format), or "". A passphrase-protected key works only through
	// the agent.
	IdentityFile string
	// AgentSocket is the path of an ssh agent's socket (what SSH_AUTH_SOCK
	// holds), or "" for no agent. At least one of IdentityFile and
	// AgentSocket must be set.
	AgentSocket string
	// KnownHostsFile is the known_hosts file (OpenSSH format) holding the
	// server's host key. Required: host keys are always verified.
	KnownHostsFile string
	// Root is the absolute path of the destination root on the server. It
	// need not exist: reads see an empty store and the first write creates
	// it (with its missing parents).
	Root string
	// DialTimeout bounds connecting, the SSH handshake and the SFTP
	// session's start; 0 means 30 seconds.
	DialTimeout time.Duration
}

const (
	defaultDialTimeout = 30 * time.Second
	chunkSize          = 1 << 20 // Put checks its context between chunks
)

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

	dirMu sync.Mutex
	dirs  map[string]bool // directories (server paths) known to exist

	cas    sync.Mutex   // serialises PutIf with a non-zero Version
	writes sync.RWMutex // Put and PutIf hold it shared, SweepTemp exclusively
}

var _ storage.Store = (*Store)(nil)

// New checks opts, reads the identity and known_hosts files and connects.
// An unknown or changed host key fails here, before anything is written, with
// an error matching *HostKeyError. ctx bounds the connection (together with
// opts.DialTimeout); later calls reconnect with their own context if needed.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Port == 0 {
		opts.Port = 22
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = defaultDialTimeout
	}
	s := &Store{
		opts: opts,
		addr: net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)),
		root: path.Clean(opts.Root),
		dirs: map[string]bool{},
	}
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

// Close closes the connection. Calls after Close fail with an error matching
// os.ErrClosed; closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.conn == nil {
		return nil
	}
	err := s.conn.close()
	s.conn = nil
	return err
}

// errorf wraps err with the store, the operation and the path.
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
	root := s.root
	if root != "/" {
		root += "/"
	}
	return len(p) > len(root) && strings.HasPrefix(p, root)
}

// notExist is the error for a missing path, matching storage.ErrNotExist.
func notExist(p, why string) error {
	err := storage.ErrNotExist
	if why != "" {
		err = fmt.Errorf("%w (%s)", err, why)
	}
	return &fs.PathError{Op: "stat", Path: p, Err: err}
}

// Put implements storage.Store: see the package documentation. If r fails,
// yields more or fewer than size bytes, or ctx is cancelled, the temporary
// file is removed and the old object, or none, remains.
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64) error {
	if err := s.put(ctx, p, r, size); err != nil {
		return s.errorf("put", p, err)
	}
	return nil
}

func (s *Store) put(ctx context.Context, p string, r io.Reader, size int64) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("negative size %d", size)
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	w, err := s.begin(c, p)
	if err != nil {
		return err
	}
	defer w.cleanup()
	if err := copyExact(ctx, w.f, r, size); err != nil {
		return err
	}
	if err := w.closeFile(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.sftp.PosixRename(w.tmp, w.target); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	w.published = true
	return nil
}

// copyExact copies exactly size bytes from src to dst and checks that src
// has nothing more, checking ctx between chunks.
func copyExact(ctx context.Context, dst io.Writer, src io.Reader, size int64) error {
	var done int64
	for done < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.CopyN(dst, src, min(chunkSize, size-done))
		done += n
		if err == io.EOF {
			return fmt.Errorf("short input: got %d of %d bytes", done, size)
		}
		if err != nil {
			return fmt.Errorf("after %d of %d bytes: %w", done, size, err)
		}
	}
	var extra [1]byte
	n, err := io.ReadFull(src, extra[:])
	switch {
	case n > 0:
		return fmt.Errorf("input is longer than %d bytes", size)
	case err != io.EOF:
		return fmt.Errorf("after %d of %d bytes: %w", size, size, err)
	}
	return ctx.Err()
}

// tempWriter is a temporary file being written next to its target.
type tempWriter struct {
	s         *Store
	c         *conn
	f         *sftplib.File // nil once closed
	tmp       string        // server path of the temporary file
	target    string        // server path of the target
	created   []string      // directories begin made, outermost first
	published bool          // tmp no longer exists under its name
}

// begin creates the target's missing parent directories and a temporary
// file next to it. A concurrent Delete may prune a directory just made or
// checked; begin then starts over.
func (s *Store) begin(c *conn, p string) (*tempWriter, error) {
	target := s.full(p)
	dir := path.Dir(target)
	var created []string
	for attempt := 1; ; attempt++ {
		made, err := s.mkdirs(c, p)
		created = append(created, made...)
		if err != nil {
			s.removeDirs(c, created)
			return nil, err
		}
		f, tmp, err := createTemp(c, dir)
		if err == nil {
			return &tempWriter{s: s, c: c, f: f, tmp: tmp, target: target, created: created}, nil
		}
		s.forgetDirs(dir)
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			s.removeDirs(c, created)
			return nil, fmt.Errorf("create temporary file: %w", err)
		}
	}
}

// createTemp creates a new, empty temporary file in the server directory
// dir.
func createTemp(c *conn, dir string) (*sftplib.File, string, error) {
	for range 5 {
		tmp := path.Join(dir, storage.TempPrefix+rand.Text())
		f, err := c.sftp.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		if err == nil {
			return f, tmp, nil
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, "", err
		}
		// SFTP v3 reports an existing name as a generic failure: a random
		// name collision is all but impossible, so any other error is
		// retried only a few times.
		if _, serr := c.sftp.Lstat(tmp); serr != nil {
			return nil, "", err
		}
	}
	return nil, "", errors.New("cannot create a unique temporary file")
}

// closeFile fsyncs (where the server can) and closes the temporary file.
func (w *tempWriter) closeFile() error {
	var err error
	if w.c.fsync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// cleanup closes and removes the temporary file unless it was published,
// then (after a failure) removes the directories begin created if empty.
func (w *tempWriter) cleanup() {
	if w.f != nil {
		w.f.Close()
	}
	if !w.published {
		w.c.sftp.Remove(w.tmp)
		w.s.removeDirs(w.c, w.created)
	}
}

// mkdirs makes sure the parent directories of the store path p exist,
// creating the missing ones, and returns the server paths of those it
// created, outermost first. A parent that is a symbolic link fails with
// storage.ErrInvalidPath, one that is not a directory with an error naming
// it. The root itself (and its parents) is created like mkdir -p.
func (s *Store) mkdirs(c *conn, p string) ([]string, error) {
	var created []string
	if !s.knownDir(s.root) {
		made, err := s.mkdirRoot(c)
		if err != nil {
			return nil, err
		}
		created = append(created, made...)
	}
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		dir := s.full(strings.Join(segs[:i], "/"))
		if s.knownDir(dir) {
			continue
		}
		fi, err := c.sftp.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			err = c.sftp.Mkdir(dir)
			if err == nil {
				created = append(created, dir)
			}
			// An error may be a concurrent Mkdir: look again.
			fi, err = c.sftp.Lstat(dir)
		}
		if err != nil {
			return created, fmt.Errorf("directory %s: %w", strings.Join(segs[:i], "/"), err)
		}
		if err := checkDir(strings.Join(segs[:i], "/"), fi); err != nil {
			return created, err
		}
		s.markDir(dir)
	}
	return created, nil
}

// mkdirRoot creates the root and its missing parents.
func (s *Store) mkdirRoot(c *conn) ([]string, error) {
	var missing []string
	for dir := s.root; ; dir = path.Dir(dir) {
		fi, err := c.sftp.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("root: %s is not a directory", dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == "/" {
			return nil, fmt.Errorf("root: stat %s: %w", dir, err)
		}
		missing = append(missing, dir)
	}
	var created []string
	for _, dir := range slices.Backward(missing) {
		if err := c.sftp.Mkdir(dir); err != nil {
			if fi, serr := c.sftp.Stat(dir); serr != nil || !fi.IsDir() {
				return created, fmt.Errorf("root: mkdir %s: %w", dir, err)
			}
		} else {
			created = append(created, dir)
		}
	}
	s.markDir(s.root)
	return created, nil
}

// checkDir checks that fi, the Lstat of the store directory p, is a plain
// directory.
func checkDir(p string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link (never followed)", storage.ErrInvalidPath, p)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", p)
	}
	return nil
}

func (s *Store) knownDir(dir string) bool {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	return s.dirs[dir]
}

func (s *Store) markDir(dir string) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	s.dirs[dir] = true
}

// forgetDirs forgets dir and everything below it.
func (s *Store) forgetDirs(dir string) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	for d := range s.dirs {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			delete(s.dirs, d)
		}
	}
}

// removeDirs removes the given directories, innermost first, while they are
// empty (best effort).
func (s *Store) removeDirs(c *conn, dirs []string) {
	for _, dir := range slices.Backward(dirs) {
		s.forgetDirs(dir)
		if c.sftp.RemoveDirectory(dir) != nil {
			return
		}
	}
}

// Get implements storage.Store: it reads a regular file whole and returns
// its Version ("sha256:<hex>"). A missing path, a directory, a symbolic
// link or a path below a file yields an error matching storage.ErrNotExist.
func (s *Store) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	data, err := s.get(ctx, p)
	if err != nil {
		return nil, "", s.errorf("get", p, err)
	}
	return data, versionOf(data), nil
}

func (s *Store) get(ctx context.Context, p string) ([]byte, error) {
	c, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	defer watch(ctx, c)()
	f, err := s.open(c, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(&ctxReader{ctx: ctx, r: f})
}

// versionOf returns the Version of content.
func versionOf(data []byte) storage.Version {
	sum := sha256.Sum256(data)
	return storage.Version("sha256:" + hex.EncodeToString(sum[:]))
}

// open opens the regular file at p for reading.
func (s *Store) open(c *conn, p string) (*sftplib.File, error) {
	if _, err := s.lstat(c, p); err != nil {
		return nil, err
	}
	f, err := c.sftp.Open(s.full(p))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notExist(p, "")
		}
		return nil, err
	}
	// Lstat and Open are two steps: check what was opened.
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notExist(p, "not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lstat validates p and returns the Lstat of the regular file there. A path
// that is missing, not a regular file, or below something that is not a
// directory yields an error matching storage.ErrNotExist.
func (s *Store) lstat(c *conn, p string) (fs.FileInfo, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	fi, err := c.sftp.Lstat(s.full(p))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notExist(p, "")
		}
		// Some servers report "below a regular file" (ENOTDIR) as a
		// generic failure: look at the parents.
		var se *sftplib.StatusError
		if errors.As(err, &se) && se.FxCode() == sftplib.ErrSSHFxFailure && s.parentMissing(c, p) {
			return nil, notExist(p, "a parent is not a directory")
		}
		return nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		return fi, nil
	case fi.IsDir():
		return nil, notExist(p, "a directory is not an object")
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, notExist(p, "a symbolic link is not an object")
	default:
		return nil, notExist(p, "a special file is not an object")
	}
}

// parentMissing reports whether some parent directory of p is missing or
// not a directory.
func (s *Store) parentMissing(c *conn, p string) bool {
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		fi, err := c.sftp.Lstat(s.full(strings.Join(segs[:i], "/")))
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
			return true
		}
	}
	return false
}

// PutIf implements storage.Store.
//
// With the zero Version it writes data to a temporary file, fsyncs it and
// hard-links it to the target with hardlink@openssh.com, which fails if any
// entry has that name: an atomic exclusive create that never exposes partial
// content, safe between processes and hosts. (SFTP v3 reports that failure
// as a generic SSH_FX_FAILURE, so an Lstat tells "exists" from other
// errors.) A server without hardlink@openssh.com gets an O_EXCL create of the
// target written in place: still exclusive, but a concurrent reader may
// briefly see a partial object.
//
// With a non-zero Version it compares ifVersion with the Version of the
// current content and, if they match, replaces the object by rename. The
// compare and the rename are two steps: calls on this Store are serialised,
// but between processes this is safe only because writers hold the
// destination lock.
func (s *Store) PutIf(ctx context.Context, p string, data []byte, ifVersion storage.Version) (storage.Version, error) {
	if err := s.putIf(ctx, p, data, ifVersion); err != nil {
		return "", s.errorf("put-if", p, err)
	}
	return versionOf(data), nil
}

func (s *Store) putIf(ctx context.Context, p string, data []byte, ifVersion storage.Version) error {
	if err := checkPath(p); err != nil {
		return err
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	if ifVersion != "" {
		// Compare before writing anything, so that a failed condition
		// leaves no trace (not even a parent directory).
		s.cas.Lock()
		defer s.cas.Unlock()
		cur, err := s.currentVersion(ctx, c, p)
		if err != nil {
			return err
		}
		if cur != ifVersion {
			if cur == "" {
				return fmt.Errorf("%w: object is absent, want version %s", storage.ErrPrecondition, ifVersion)
			}
			return fmt.Errorf("%w: version is %s, want %s", storage.ErrPrecondition, cur, ifVersion)
		}
	}
	if ifVersion == "" && !c.hardlink {
		return s.createExclusive(c, p, data)
	}
	w, err := s.begin(c, p)
	if err != nil {
		return err
	}
	defer w.cleanup()
	if _, err := w.f.Write(data); err != nil {
		return err
	}
	if err := w.closeFile(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ifVersion != "" {
		if err := c.sftp.PosixRename(w.tmp, w.target); err != nil {
			return fmt.Errorf("rename into place: %w", err)
		}
		w.published = true
		return nil
	}
	if err := c.sftp.Link(w.tmp, w.target); err != nil {
		if _, serr := c.sftp.Lstat(w.target); serr == nil {
			return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
		}
		return fmt.Errorf("hard-link into place: %w", err)
	}
	w.published = true
	c.sftp.Remove(w.tmp)
	return nil
}

// currentVersion returns the Version of the object at p, or "" if there is
// none.
func (s *Store) currentVersion(ctx context.Context, c *conn, p string) (storage.Version, error) {
	f, err := s.open(c, p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(&ctxReader{ctx: ctx, r: f})
	if err != nil {
		return "", err
	}
	return versionOf(data), nil
}

// createExclusive is the exclusive create for servers without
// hardlink@openssh.com: O_EXCL on the target, then the content in place.
func (s *Store) createExclusive(c *conn, p string, data []byte) error {
	created, err := s.mkdirs(c, p)
	if err != nil {
		s.removeDirs(c, created)
		return err
	}
	target := s.full(p)
	f, err := c.sftp.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		if _, serr := c.sftp.Lstat(target); serr == nil {
			return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
		}
		s.removeDirs(c, created)
		return err
	}
	_, err = f.Write(data)
	if err == nil && c.fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.sftp.Remove(target)
		s.removeDirs(c, created)
	}
	return err
}

// Open implements storage.Store: it opens a regular file for streaming
// reads. A missing path, a directory, a symbolic link or a path below a
// file yields an error matching storage.ErrNotExist. Each Read checks ctx.
func (s *Store) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	c, err := s.client(ctx)
	if err != nil {
		return nil, s.errorf("open", p, err)
	}
	stop := watch(ctx, c)
	f, err := s.open(c, p)
	if err != nil {
		stop()
		return nil, s.errorf("open", p, err)
	}
	return &reader{ctxReader: ctxReader{ctx: ctx, r: f}, f: f, stop: stop}, nil
}

// ctxReader fails once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// reader is the io.ReadCloser Open returns.
type reader struct {
	ctxReader
	f    *sftplib.File
	stop func()
}

func (r *reader) Close() error {
	r.stop()
	return r.f.Close()
}

// Stat implements storage.Store: it describes a regular file. A missing
// path, a directory, a symbolic link or a path below a file yields an error
// matching storage.ErrNotExist.
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
	c, err := s.client(ctx)
	if err != nil {
		return storage.Info{}, err
	}
	defer watch(ctx, c)()
	fi, err := s.lstat(c, p)
	if err != nil {
		return storage.Info{}, err
	}
	return storage.Info{Path: p, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete implements storage.Store. It removes the regular file or symbolic
// link (never its target) at p; a missing path or a directory is left alone
// without error. Directories left empty are then removed, up to but never
// including the root (best effort).
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
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	full := s.full(p)
	fi, err := c.sftp.Lstat(full)
	if err != nil {
		var se *sftplib.StatusError
		if errors.Is(err, fs.ErrNotExist) ||
			errors.As(err, &se) && se.FxCode() == sftplib.ErrSSHFxFailure && s.parentMissing(c, p) {
			return nil
		}
		return err
	}
	if fi.IsDir() {
		return nil
	}
	if err := c.sftp.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Prune the directories left empty; RemoveDirectory fails on the first
	// one that is not.
	for dir := path.Dir(full); s.below(dir); dir = path.Dir(dir) {
		s.forgetDirs(dir)
		if c.sftp.RemoveDirectory(dir) != nil {
			break
		}
	}
	return nil
}

// List implements storage.Store. It walks the tree below the root without
// following symbolic links and calls fn, in the caller's goroutine, for
// every regular file whose path starts with prefix, in byte-wise order of
// the full path. Symbolic links, directories, special files and temporary
// files (storage.TempPrefix) are skipped. A missing root lists nothing.
//
// prefix is a plain string prefix ("a" matches "a0" and "a/b"); its
// directory part, up to the last slash, must be a clean path or the call
// fails with storage.ErrInvalidPath. If fn returns an error, List stops and
// returns that error unwrapped.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	err := s.list(ctx, prefix, fn)
	if fe := (*fnError)(nil); errors.As(err, &fe) {
		return fe.err
	}
	if err != nil {
		return s.errorf("list", strconv.Quote(prefix), err)
	}
	return nil
}

// fnError carries an error returned by List's callback.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	dir, filter, err := splitPrefix(prefix)
	if err != nil {
		return err
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	rel := ""
	if dir != "" {
		// Every directory of the prefix must be a plain directory.
		segs := strings.Split(dir, "/")
		for i := range segs {
			fi, err := c.sftp.Lstat(s.full(strings.Join(segs[:i+1], "/")))
			if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
				var se *sftplib.StatusError
				if err == nil || errors.Is(err, fs.ErrNotExist) ||
					errors.As(err, &se) && se.FxCode() == sftplib.ErrSSHFxFailure {
					return nil
				}
				return err
			}
		}
		rel = dir + "/"
	}
	return s.walk(ctx, c, rel, filter, fn)
}

// entry is one directory entry to visit, keyed for byte-wise path order: a
// directory sorts as name+"/", the common prefix of everything below it.
type entry struct {
	key string
	fi  fs.FileInfo
}

// walk lists the store directory rel ("" or ending in "/"), keeping only
// entries whose key starts with filter, and recurses into directories.
// READDIR returns each entry's own attributes (lstat), so links are seen as
// links and never followed.
func (s *Store) walk(ctx context.Context, c *conn, rel, filter string, fn func(storage.Info) error) error {
	fis, err := c.sftp.ReadDirContext(ctx, s.full(strings.TrimSuffix(rel, "/")))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a missing root, or removed while walking
	}
	if err != nil {
		return err
	}
	entries := make([]entry, 0, len(fis))
	for _, fi := range fis {
		name := fi.Name()
		if name == "." || name == ".." || strings.HasPrefix(name, storage.TempPrefix) || !strings.HasPrefix(name+"/", filter) {
			continue
		}
		switch {
		case fi.Mode().IsRegular() && strings.HasPrefix(name, filter):
			entries = append(entries, entry{key: name, fi: fi})
		case fi.IsDir():
			entries = append(entries, entry{key: name + "/", fi: fi})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.fi.IsDir() {
			info := storage.Info{Path: rel + e.key, Size: e.fi.Size(), ModTime: e.fi.ModTime()}
			if err := fn(info); err != nil {
				return &fnError{err}
			}
			continue
		}
		if err := s.walk(ctx, c, rel+e.key, "", fn); err != nil {
			return err
		}
	}
	return nil
}

// SweepTemp removes the temporary files (storage.TempPrefix) that writes
// interrupted by a crash or a dropped connection left anywhere below the
// root, then the directories this leaves empty (never the root, never a
// directory that was empty before). Symbolic links are not followed. It
// returns how many temporary files it removed. It waits for this Store's
// in-flight writes but cannot see other processes' writes: call it only
// while holding the destination lock, as part of crash recovery.
func (s *Store) SweepTemp(ctx context.Context) (int, error) {
	c, err := s.client(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: sweep temporary files: %w", s, err)
	}
	defer watch(ctx, c)()
	s.writes.Lock()
	defer s.writes.Unlock()
	n, err := s.sweep(ctx, c, s.root)
	if err != nil {
		return n, fmt.Errorf("%s: sweep temporary files: %w", s, err)
	}
	return n, nil
}

// sweep removes the temporary files below the server directory dir and
// returns how many.
func (s *Store) sweep(ctx context.Context, c *conn, dir string) (int, error) {
	fis, err := c.sftp.ReadDirContext(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	count := 0
	for _, fi := range fis {
		if err := ctx.Err(); err != nil {
			return count, err
		}
		name := fi.Name()
		if name == "." || name == ".." {
			continue
		}
		full := path.Join(dir, name)
		switch {
		case fi.IsDir(): // READDIR attributes are lstat's: a link is no directory
			n, err := s.sweep(ctx, c, full)
			count += n
			if err != nil {
				return count, err
			}
			if n > 0 && c.sftp.RemoveDirectory(full) == nil {
				s.forgetDirs(full) // it was emptied by this sweep
			}
		case strings.HasPrefix(name, storage.TempPrefix):
			if err := c.sftp.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return count, err
			}
			count++
		}
	}
	return count, nil
}
