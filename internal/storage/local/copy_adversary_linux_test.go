package local_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// The adversary's cases of the kernel copy of a bundle file (copy_file_range
// through os.File.ReadFrom, verified from the temporary file's own bytes:
// tempWriter.Read, copiedBy). TestBundleFileCopiedInTheKernel has the copy
// that lands whole and a file rewritten in place at the same size.

// sealedFile seals a bundle in dir holding one file, name, with data, and
// returns the loaded bundle.
func sealedFile(t *testing.T, dir, name string, data []byte) *bundle.Bundle {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Seal(t.Context(), dir, "adversary.test", time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Load(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// copyFile writes the bundle file name of b to p in s, staged and committed
// as a run writes it (stage) or with Put, through a copySpy calling after
// once the first buffer was copied.
func copyFile(t *testing.T, s *local.Store, b *bundle.Bundle, name, p string, stage bool, after func()) (*copySpy, error) {
	t.Helper()
	r, err := b.OpenVerified(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, _ := b.Manifest.Lookup(name)
	spy := &copySpy{r: r, after: after}
	opts := storage.PutOptions{Mode: storage.PutCreate}
	if !stage {
		_, err = s.Put(t.Context(), p, spy, want.Size, opts)
		return spy, err
	}
	g, err := s.Stage(t.Context(), p, spy, want.Size, opts)
	if err != nil {
		return spy, err
	}
	return spy, g.Commit(t.Context())
}

// shmDir is a new directory on /dev/shm (a tmpfs), removed when the test ends.
func shmDir(t *testing.T) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skipf("/dev/shm is not a tmpfs (%v)", err)
	}
	dir, err := os.MkdirTemp("/dev/shm", "distributor-copy-")
	if err != nil {
		t.Skipf("/dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestKernelCopyAcrossFileSystems: a bundle on one file system and the
// destination on another (a tmpfs and t.TempDir's disk, both ways round):
// copy_file_range refuses (EXDEV, and Go copies in user space) or copies
// across; either way the published bytes are the bundle file's, read back
// and verified, for a Put and a staged write, and nothing else is left.
func TestKernelCopyAcrossFileSystems(t *testing.T) {
	disk, shm := t.TempDir(), shmDir(t)
	if sameFS(t, disk, shm) {
		t.Skip("t.TempDir is on the tmpfs of /dev/shm")
	}
	// Several copy buffers and a tail that fills none.
	data := bytes.Repeat([]byte("across file systems\n"), (3<<20)/20+7)
	for _, tc := range []struct{ name, bundle, root string }{
		{"tmpfs to disk", shm, disk},
		{"disk to tmpfs", disk, shm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, root := filepath.Join(tc.bundle, "b"), filepath.Join(tc.root, "root")
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			b := sealedFile(t, src, "big.bin", data)
			s := newStore(t, root)
			for _, stage := range []bool{false, true} {
				p := "d/put.bin"
				if stage {
					p = "d/staged.bin"
				}
				spy, err := copyFile(t, s, b, "big.bin", p, stage, nil)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				if !spy.copied {
					t.Errorf("%s: the bundle file was not copied in the kernel", p)
				}
				if got := readFile(t, root, p); got != string(data) {
					t.Errorf("%s: published %d bytes that differ from the bundle file's %d", p, len(got), len(data))
				}
			}
			if tmp := tempFiles(t, root); len(tmp) > 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}

func sameFS(t *testing.T, a, b string) bool {
	t.Helper()
	var sa, sb unix.Stat_t
	if err := unix.Stat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev
}

// TestSourceResizedDuringKernelCopy: a bundle file truncated (below the
// copy's offset, or above it) or extended after the first buffer was copied
// fails the write with the bundle's size mismatch, for a Put and a staged
// write (a run's): the target is not published and the temporary file is
// removed.
func TestSourceResizedDuringKernelCopy(t *testing.T) {
	const size = 1 << 20 // four copy buffers
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	for _, tc := range []struct {
		name   string
		resize func(f *os.File) error
		reason string
	}{
		{"truncated below the offset", func(f *os.File) error { return f.Truncate(100) }, "size"},
		{"truncated above the offset", func(f *os.File) error { return f.Truncate(size / 2) }, "size"},
		{"truncated to nothing", func(f *os.File) error { return f.Truncate(0) }, "size"},
		{"extended", func(f *os.File) error { _, err := f.WriteAt([]byte("more"), size); return err }, "size exceeds"},
	} {
		for _, stage := range []bool{false, true} {
			name := tc.name + "/put"
			if stage {
				name = tc.name + "/stage"
			}
			t.Run(name, func(t *testing.T) {
				src := t.TempDir()
				b := sealedFile(t, src, "big.bin", data)
				root := t.TempDir()
				s := newStore(t, root)
				spy, err := copyFile(t, s, b, "big.bin", "a/big.bin", stage, func() {
					f, err := os.OpenFile(filepath.Join(src, "big.bin"), os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					if err := tc.resize(f); err != nil {
						t.Fatal(err)
					}
				})
				var mm *bundle.MismatchError
				if !errors.As(err, &mm) || !strings.Contains(mm.Reason, tc.reason) {
					t.Fatalf("got %v, want the bundle's %q mismatch", err, tc.reason)
				}
				if !spy.copied {
					t.Error("the bundle file was not copied in the kernel")
				}
				if exists(filepath.Join(root, "a", "big.bin")) {
					t.Error("the resized file was published")
				}
				if tmp := tempFiles(t, root); len(tmp) > 0 {
					t.Errorf("temporary files left: %v", tmp)
				}
			})
		}
	}
}

// TestKernelCopyOntoFullDisk: a bundle file copied in the kernel onto a
// file system that fills part way (bundle and root on one small tmpfs, so
// copy_file_range copies within it rather than falling back to user space:
// TestDiskFull in internal/app copies across, from the disk) fails with
// ENOSPC, publishes nothing and removes its temporary file: the space is
// free again. A file larger than the whole file system fails the same way.
// Needs root and mount(2); skips otherwise.
func TestKernelCopyOntoFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root and mount permission): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	src, root := filepath.Join(mnt, "b"), filepath.Join(mnt, "root")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	// 600 KiB in the bundle leaves about 400 KiB: the copy fills the rest
	// after its first buffer (256 KiB).
	b := sealedFile(t, src, "big.bin", bytes.Repeat([]byte("full disk\n"), 600<<10/10))
	s := newStore(t, root)
	put(t, s, "keep.txt", "keep") // the root exists before the free space is measured
	free := func() uint64 {
		var st unix.Statfs_t
		if err := unix.Statfs(mnt, &st); err != nil {
			t.Fatal(err)
		}
		return st.Bfree
	}
	before := free()
	for _, stage := range []bool{false, true} {
		spy, err := copyFile(t, s, b, "big.bin", "big.bin", stage, nil)
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "copy_file_range") {
			t.Fatalf("stage %v: got %v, want copy_file_range's ENOSPC", stage, err)
		}
		if !spy.copied {
			t.Errorf("stage %v: the bundle file was not copied in the kernel", stage)
		}
		if exists(filepath.Join(root, "big.bin")) {
			t.Errorf("stage %v: the partial copy was published", stage)
		}
		if tmp := tempFiles(t, root); len(tmp) > 0 {
			t.Errorf("stage %v: temporary files left: %v", stage, tmp)
		}
		if after := free(); after != before {
			t.Errorf("stage %v: %d blocks free after the failed copy, %d before", stage, after, before)
		}
	}
	if got := readFile(t, root, "keep.txt"); got != "keep" {
		t.Errorf("keep.txt holds %q", got)
	}
}

// TestTempFileChangedBeforeReadBack: another process writing into the
// temporary file between the kernel's copy of a buffer and its read-back
// (here at the read-back's first read, held by a fanotify permission event
// until the change is made) fails the write with the bundle's sha256
// mismatch: the bytes verified are those the file holds, not those copied.
// Needs fanotify permission events (root, CONFIG_FANOTIFY_ACCESS_PERMISSIONS);
// skips otherwise.
func TestTempFileChangedBeforeReadBack(t *testing.T) {
	src, root := t.TempDir(), t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	b := sealedFile(t, src, "big.bin", data)
	s := newStore(t, root)
	put(t, s, "a/keep.txt", "keep") // a/ exists: the watch is on it
	fan, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDWR|unix.O_LARGEFILE)
	if err != nil {
		t.Skipf("no fanotify permission events: %v", err)
	}
	defer unix.Close(fan)
	if err := unix.FanotifyMark(fan, unix.FAN_MARK_ADD, unix.FAN_ACCESS_PERM|unix.FAN_EVENT_ON_CHILD, unix.AT_FDCWD, filepath.Join(root, "a")); err != nil {
		t.Skipf("fanotify_mark: %v", err)
	}
	changed, stop, stopped := make(chan string, 1), make(chan struct{}), make(chan struct{})
	go func() { defer close(stopped); answer(fan, changed, stop) }()

	_, err = copyFile(t, s, b, "big.bin", "a/big.bin", true, nil)
	unix.FanotifyMark(fan, unix.FAN_MARK_FLUSH, 0, unix.AT_FDCWD, "") // no event blocks the checks below
	close(stop)
	<-stopped
	var what string
	select {
	case what = <-changed:
	default:
		t.Fatal("no read of a file in the target's directory was seen")
	}
	t.Logf("changed %s before its read-back; the write: %v", what, err)
	if !strings.Contains(what, storage.TempPrefix) {
		t.Fatalf("the first read in the target's directory was of %s, not of a temporary file", what)
	}
	var mm *bundle.MismatchError
	if !errors.As(err, &mm) || !strings.Contains(mm.Reason, "sha256 mismatch") {
		t.Fatalf("temporary file changed before its read-back: got %v, want a sha256 mismatch", err)
	}
	if exists(filepath.Join(root, "a", "big.bin")) {
		t.Error("bytes changed in the temporary file were published")
	}
	if tmp := tempFiles(t, root); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// metaSize is the size of a fanotify event's metadata.
var metaSize = binary.Size(unix.FanotifyEventMetadata{})

// answer serves the fanotify group fan: at the first permission event it
// overwrites the first bytes of the file being read (through the event's
// descriptor, which raises no event) and sends the file's path on changed;
// every event is allowed. It returns once stop is closed.
func answer(fan int, changed chan<- string, stop <-chan struct{}) {
	buf := make([]byte, 4096)
	first := true
	for {
		select {
		case <-stop:
			return
		default:
		}
		unix.Poll([]unix.PollFd{{Fd: int32(fan), Events: unix.POLLIN}}, 20)
		n, err := unix.Read(fan, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+metaSize <= n; {
			var ev unix.FanotifyEventMetadata
			binary.Read(bytes.NewReader(buf[off:off+metaSize]), binary.NativeEndian, &ev)
			off += int(ev.Event_len)
			if ev.Fd < 0 {
				continue
			}
			if first {
				first = false
				path, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(ev.Fd)))
				unix.Pwrite(int(ev.Fd), []byte("CHANGED BY ANOTHER PROCESS"), 0)
				changed <- path
			}
			resp := unix.FanotifyResponse{Fd: ev.Fd, Response: unix.FAN_ALLOW}
			var out bytes.Buffer
			binary.Write(&out, binary.NativeEndian, &resp)
			unix.Write(fan, out.Bytes())
			unix.Close(int(ev.Fd))
		}
	}
}
