package local

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// canCreateAt says that staged writes create their temporary files with
// createTempAt, on a cached directory's descriptor.
const canCreateAt = true

// createTempAt creates a new temporary file with mode 0644 in dirfd. It calls
// openat(2) itself and wraps the descriptor with os.NewFile, so the file is not
// offered to the runtime's poller (which refuses a regular file only after four
// fcntl calls and a failing epoll_ctl, per file, when os opens it), and skips
// the fchmod undoing the umask when the umask leaves 0644 as it is.
func (s *Store) createTempAt(dirfd int) (*os.File, string, error) {
	return dirstore.NewTemp(func(name string) (*os.File, error) {
		fd, err := openat(dirfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(fileMode))
		if err != nil {
			return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
		}
		f := os.NewFile(uintptr(fd), name)
		if !s.umaskKeepsFileMode() {
			if err := f.Chmod(fileMode); err != nil {
				f.Close()
				unix.Unlinkat(dirfd, name, 0)
				return nil, err
			}
		}
		return f, nil
	})
}

// renameNoReplace renames old to new in dirfd only if new does not exist
// (renameat2 RENAME_NOREPLACE: one system call where a link and an unlink take
// two); without the flag it fails matching errors.ErrUnsupported.
func renameNoReplace(dirfd int, old, new string) error {
	for {
		err := unix.Renameat2(dirfd, old, dirfd, new, unix.RENAME_NOREPLACE)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
			return fmt.Errorf("renameat2 RENAME_NOREPLACE: %w (%w)", errors.ErrUnsupported, err)
		}
		return &fs.PathError{Op: "renameat2", Path: new, Err: err}
	}
}

// openat is unix.Openat, retried when a signal interrupts it.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// umaskKeepsFileMode reports whether the process umask clears none of
// fileMode's bits, read once from /proc/self/status (umask(2) would change it
// for a moment); false when it cannot be read (the file is then chmodded).
func (s *Store) umaskKeepsFileMode() bool {
	s.umaskOnce.Do(func() {
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		for line := range bytes.Lines(data) {
			v, ok := bytes.CutPrefix(line, []byte("Umask:"))
			if !ok {
				continue
			}
			mask, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32)
			s.umaskKeeps = err == nil && fs.FileMode(mask)&fileMode == 0
			return
		}
	})
	return s.umaskKeeps
}

// startWriteback asks the kernel to start writing f's dirty pages in
// [off, off+n) (n 0: to the end) to disk without waiting (sync_file_range
// SYNC_FILE_RANGE_WRITE). The fsync or the store's Sync still makes the bytes
// durable; this only starts the disk earlier, so a failure is ignored.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// canSyncfs says the platform flushes a whole file system with one call.
const canSyncfs = true

func syncfs(f *os.File) error { return unix.Syncfs(int(f.Fd())) }
