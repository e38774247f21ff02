package gcs_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
)

// serviceAccountFile writes a service account key whose token endpoint is
// tokenURL.
func serviceAccountFile(t *testing.T, path, tokenURL string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "test", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "publisher@test.iam.gserviceaccount.com", "token_uri": tokenURL,
	})
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestApplicationDefaultCredentials: a service account key named by
// GOOGLE_APPLICATION_CREDENTIALS, or found where gcloud keeps its
// application default credentials, is exchanged for a token (once) that
// every request carries; with Anonymous or STORAGE_EMULATOR_HOST none is
// sent.
func TestApplicationDefaultCredentials(t *testing.T) {
	var mu sync.Mutex
	tokens, auth := 0, ""
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens++
		mu.Unlock()
		if r.ParseForm() != nil || r.PostForm.Get("assertion") == "" {
			http.Error(w, "no assertion", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"tok-123","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokenSrv.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"items":[]}`))
	}))
	t.Cleanup(api.Close)

	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.json")
	serviceAccountFile(t, keyFile, tokenSrv.URL)
	home := filepath.Join(dir, "home")
	serviceAccountFile(t, filepath.Join(home, ".config", "gcloud", "application_default_credentials.json"), tokenSrv.URL)
	for _, tc := range []struct {
		name      string
		env       map[string]string
		anonymous bool
		want      string
	}{
		{"GOOGLE_APPLICATION_CREDENTIALS", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": keyFile}, false, "Bearer tok-123"},
		{"gcloud", map[string]string{"HOME": home}, false, "Bearer tok-123"},
		{"anonymous", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": keyFile}, true, ""},
		{"emulator", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": keyFile, "STORAGE_EMULATOR_HOST": "127.0.0.1:1"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			tokens, auth = 0, "unset"
			mu.Unlock()
			s, err := gcs.New(t.Context(), gcs.Options{Bucket: "b", Endpoint: api.URL, Anonymous: tc.anonymous,
				Getenv: func(k string) string { return tc.env[k] }, ResponseTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.List(t.Context(), "", func(storage.Info) error { return nil }); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if auth != tc.want {
				t.Errorf("Authorization %q, want %q", auth, tc.want)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.want != ""]; tokens != want {
				t.Errorf("%d token requests for two API requests, want %d", tokens, want)
			}
		})
	}
}

// TestCredentialsFileUnreadable: a GOOGLE_APPLICATION_CREDENTIALS that
// names no file fails New, naming the file.
func TestCredentialsFileUnreadable(t *testing.T) {
	_, err := gcs.New(t.Context(), gcs.Options{Bucket: "b", SkipCheck: true,
		Getenv: func(k string) string {
			return map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/key.json"}[k]
		}})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/key.json") {
		t.Fatalf("New with a missing credentials file: %v", err)
	}
}
