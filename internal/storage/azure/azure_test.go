package azure_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

func TestConformance(t *testing.T) {
	srv := azuretest.Azurite(t)
	var opened sync.Map // *azure.Store -> azure.Options
	open := func(t *testing.T, opts azure.Options) storage.Store {
		s := azuretest.OpenWith(t, opts)
		opened.Store(s, opts)
		return s
	}
	// plant stages a block of a new blob in dir, as a writer that died
	// uploading a large blob leaves it.
	plant := storagetest.WithPlantTemp(func(t *testing.T, s storage.Store, dir string) string {
		v, _ := opened.Load(s)
		opts := v.(azure.Options)
		rel := path.Join(dir, "upload-"+rand.Text()[:8])
		name := rel
		if opts.Prefix != "" {
			name = opts.Prefix + "/" + rel
		}
		bb := srv.Client(t, opts.Container).NewBlockBlobClient(name)
		if _, err := bb.StageBlock(t.Context(), "YmxvY2s=", streaming.NopCloser(strings.NewReader("part")), nil); err != nil {
			t.Fatal(err)
		}
		return rel
	})
	t.Run("prefix", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, srv.Options(srv.UniquePrefix(t))) }, plant)
	})
	t.Run("container-root", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			opts := srv.Options("")
			opts.Container = srv.NewContainer(t)
			return open(t, opts)
		}, plant)
	})
	t.Run("blocks", func(t *testing.T) { // every Put of more than 256 KiB in blocks
		storagetest.Run(t, func(t *testing.T) storage.Store {
			opts := srv.Options(srv.UniquePrefix(t))
			opts.BlockSize = 256 << 10
			return open(t, opts)
		}, plant)
	})
}

func put(t testing.TB, s storage.Store, p, data string, opts ...storage.PutOptions) {
	t.Helper()
	var o storage.PutOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if _, err := s.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), o); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

// TestHeaders: the blob HTTP headers of PutOptions.Metadata, and the
// Content-Type from the extension otherwise, are on the blobs as an
// independent client sees them, for a Put Blob and for committed blocks.
func TestHeaders(t *testing.T) {
	srv := azuretest.Azurite(t)
	opts := srv.Options(srv.UniquePrefix(t))
	opts.BlockSize = 1 << 10
	s := azuretest.OpenWith(t, opts)
	meta := storage.Metadata{CacheControl: "max-age=60", ContentType: "text/plain; charset=utf-8", ContentDisposition: "attachment"}
	put(t, s, "small.bin", "x", storage.PutOptions{Metadata: meta})
	if _, err := s.Put(t.Context(), "large.bin", bytes.NewReader(make([]byte, 5000)), 5000, storage.PutOptions{Mode: storage.PutCreate, Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "page.html", "<p>hi</p>")
	c := srv.Client(t, srv.Container)
	for name, want := range map[string]storage.Metadata{
		"small.bin": meta, "large.bin": meta, "page.html": {ContentType: "text/html; charset=utf-8"},
	} {
		props, err := c.NewBlobClient(opts.Prefix+"/"+name).GetProperties(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := storage.Metadata{CacheControl: deref(props.CacheControl), ContentType: deref(props.ContentType),
			ContentDisposition: deref(props.ContentDisposition)}
		if got != want {
			t.Errorf("%s: headers %+v, want %+v", name, got, want)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestLargePutNewConditionOnCommit: a blob larger than the block size goes
// up in blocks, and PutNew's If-None-Match is on the Put Block List: over
// an existing blob it fails with ErrPrecondition and the blob keeps its
// bytes; the staged blocks of a concurrent writer do not mix into another
// writer's commit.
func TestLargePutNewConditionOnCommit(t *testing.T) {
	srv := azuretest.Azurite(t)
	opts := srv.Options(srv.UniquePrefix(t))
	opts.BlockSize = 64 << 10
	s := azuretest.OpenWith(t, opts)
	first := bytes.Repeat([]byte("first..."), 40<<10) // 320 KiB: 5 blocks
	if _, err := s.Put(t.Context(), "big", bytes.NewReader(first), int64(len(first)), storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatal(err)
	}
	second := bytes.Repeat([]byte("second.."), 40<<10)
	_, err := s.Put(t.Context(), "big", bytes.NewReader(second), int64(len(second)), storage.PutOptions{Mode: storage.PutCreate})
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutNew over an existing large blob: %v, want ErrPrecondition", err)
	}
	if got, _, err := s.Get(t.Context(), "big"); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("after the refused PutNew: %d bytes (%v), want the first %d", len(got), err, len(first))
	}
	if _, err := s.Put(t.Context(), "big", bytes.NewReader(second), int64(len(second)), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Get(t.Context(), "big"); err != nil || !bytes.Equal(got, second) {
		t.Fatalf("after Put: %d bytes (%v)", len(got), err)
	}
}

// TestCredentials: a connection string, a shared key and a SAS each reach
// the container; a connection string naming another container is
// refused; errors name the store, never a key or a signature.
func TestCredentials(t *testing.T) {
	srv := azuretest.Azurite(t)
	cs := "DefaultEndpointsProtocol=http;AccountName=" + srv.Account + ";AccountKey=" + srv.Key + ";BlobEndpoint=" + srv.Endpoint + ";"
	sasToken := srv.SAS(t, srv.Container)
	for name, env := range map[string]map[string]string{
		"connection string": {"AZURE_STORAGE_CONNECTION_STRING": cs, "AZURE_STORAGE_KEY": "bm90IHRoZSBrZXk="},
		"shared key":        {"AZURE_STORAGE_KEY": srv.Key, "AZURE_STORAGE_SAS_TOKEN": "sig=wrong"},
		"sas":               {"AZURE_STORAGE_SAS_TOKEN": "?" + sasToken},
	} {
		t.Run(name, func(t *testing.T) {
			opts := srv.Options(srv.UniquePrefix(t))
			opts.Getenv = func(k string) string { return env[k] }
			s := azuretest.OpenWith(t, opts)
			put(t, s, "a.txt", "a")
			if data, _, err := s.Get(t.Context(), "a.txt"); err != nil || string(data) != "a" {
				t.Fatalf("Get: %q, %v", data, err)
			}
		})
	}
	t.Run("connection string of another container", func(t *testing.T) {
		opts := srv.Options("x")
		opts.Endpoint = "http://127.0.0.1:1/" + srv.Account
		opts.Getenv = func(k string) string { return map[string]string{"AZURE_STORAGE_CONNECTION_STRING": cs}[k] }
		if _, err := azure.New(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "AZURE_STORAGE_CONNECTION_STRING names the container") {
			t.Errorf("New with a connection string of another endpoint: %v", err)
		}
	})
	t.Run("secrets stay out of errors", func(t *testing.T) {
		for _, env := range []map[string]string{{"AZURE_STORAGE_SAS_TOKEN": sasToken}, {"AZURE_STORAGE_KEY": srv.Key}} {
			opts := srv.Options("x")
			opts.Endpoint = "http://127.0.0.1:1/" + srv.Account // nothing listens
			opts.MaxAttempts = 1
			opts.Getenv = func(k string) string { return env[k] }
			_, err := azure.New(t.Context(), opts)
			if err == nil {
				t.Fatal("New against a closed port succeeded")
			}
			if msg := err.Error(); strings.Contains(msg, "sig=") || strings.Contains(msg, srv.Key) ||
				!strings.Contains(msg, "azure://"+srv.Account+"/"+srv.Container+"/x") {
				t.Errorf("error %q shows a secret or does not name the store", msg)
			}
		}
	})
}

// TestNewChecks: New refuses bad names and endpoints without a request,
// and a missing container with one that says so.
func TestNewChecks(t *testing.T) {
	srv := azuretest.Azurite(t)
	for name, edit := range map[string]func(*azure.Options){
		"no account":         func(o *azure.Options) { o.Account = "" },
		"upper-case account": func(o *azure.Options) { o.Account = "Dev" },
		"short container":    func(o *azure.Options) { o.Container = "ab" },
		"double hyphen":      func(o *azure.Options) { o.Container = "a--b" },
		"unclean prefix":     func(o *azure.Options) { o.Prefix = "a//b" },
		"endpoint query":     func(o *azure.Options) { o.Endpoint += "?sig=x" },
		"ftp endpoint":       func(o *azure.Options) { o.Endpoint = "ftp://127.0.0.1:1" },
	} {
		t.Run(name, func(t *testing.T) {
			opts := srv.Options("")
			edit(&opts)
			if s, err := azure.New(t.Context(), opts); err == nil {
				s.Close()
				t.Error("New succeeded")
			}
		})
	}
	opts := srv.Options("")
	opts.Container = "does-not-exist"
	if _, err := azure.New(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "the container does not exist") {
		t.Errorf("New on a missing container: %v", err)
	}
	opts.SkipCheck = true
	s := azuretest.OpenWith(t, opts)
	if _, err := s.Stat(t.Context(), "x"); err == nil || !strings.Contains(err.Error(), "the container does not exist") {
		t.Errorf("first request on a missing container: %v", err)
	}
}

// TestString: the store names itself by account, container and prefix.
func TestString(t *testing.T) {
	srv := azuretest.Azurite(t)
	s := azuretest.OpenWith(t, srv.Options("a/b/"))
	if want := "azure://" + srv.Account + "/" + srv.Container + "/a/b"; s.String() != want {
		t.Errorf("String() = %q, want %q", s.String(), want)
	}
	_, err := s.Stat(context.Background(), "dir/missing")
	if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), s.String()+": stat dir/missing: BlobNotFound (HTTP 404)") {
		t.Errorf("Stat of a missing blob: %v", err)
	}
}

func strReader(s string) *strings.Reader { return strings.NewReader(s) }

// TestListVersionIsPutVersion: a listing shows a blob's Version as a conditional Put,
// Stat and Get return it, so a caller can compare them (the lock's proof
// reads the lock back from the listing of the reserved names; Azure's
// listings give ETags unquoted, its responses' headers quoted).
func TestListVersionIsPutVersion(t *testing.T) {
	s := azuretest.Azurite(t).Open(t)
	v, err := storage.PutIf(t.Context(), s, "a.txt", []byte("a"), "")
	if err != nil {
		t.Fatal(err)
	}
	infos, complete, err := s.ListPage(t.Context(), "", 10)
	if err != nil || !complete || len(infos) != 1 {
		t.Fatalf("ListPage: %v, complete %v, %d entries", err, complete, len(infos))
	}
	si, err := s.Stat(t.Context(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, gv, err := s.Get(t.Context(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if infos[0].Version != v || si.Version != v || gv != v {
		t.Errorf("Put's Version %q, ListPage's %q, Stat's %q, Get's %q: want them equal", v, infos[0].Version, si.Version, gv)
	}
}
