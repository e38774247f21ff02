package objstore

import (
	"fmt"
	"mime"
	"path"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
)

// webTypes are the Content-Types of common web files, fixed here so
// that object stores' uploads do not depend on the machine's MIME database.
var webTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".htm":         "text/html; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".mjs":         "text/javascript; charset=utf-8",
	".json":        "application/json",
	".map":         "application/json",
	".xml":         "application/xml",
	".rss":         "application/rss+xml",
	".atom":        "application/atom+xml",
	".txt":         "text/plain; charset=utf-8",
	".md":          "text/markdown; charset=utf-8",
	".markdown":    "text/markdown; charset=utf-8",
	".csv":         "text/csv; charset=utf-8",
	".tsv":         "text/tab-separated-values; charset=utf-8",
	".svg":         "image/svg+xml",
	".png":         "image/png",
	".jpg":         "image/jpeg",
	".jpeg":        "image/jpeg",
	".gif":         "image/gif",
	".webp":        "image/webp",
	".avif":        "image/avif",
	".ico":         "image/vnd.microsoft.icon",
	".pdf":         "application/pdf",
	".zip":         "application/zip",
	".gz":          "application/gzip",
	".wasm":        "application/wasm",
	".woff":        "font/woff",
	".woff2":       "font/woff2",
	".ttf":         "font/ttf",
	".otf":         "font/otf",
	".mp4":         "video/mp4",
	".webm":        "video/webm",
	".mp3":         "audio/mpeg",
	".ogg":         "audio/ogg",
	".webmanifest": "application/manifest+json",
}

// ContentType returns the Content-Type for the path p: the table above,
// then the system's MIME types, then application/octet-stream.
func ContentType(p string) string {
	ext := strings.ToLower(path.Ext(p))
	if ct, ok := webTypes[ext]; ok {
		return ct
	}
	if ext != "" {
		if ct := mime.TypeByExtension(ext); ct != "" {
			return ct
		}
	}
	return "application/octet-stream"
}

// sortListing sorts a listing byte-wise by path (a server's order may
// differ) and refuses one that names a path twice: it cannot be trusted.
func sortListing(infos []storage.Info) ([]storage.Info, error) {
	byPath := func(a, b storage.Info) int { return strings.Compare(a.Path, b.Path) }
	if !slices.IsSortedFunc(infos, byPath) { // servers mostly list in order: one pass checks it
		slices.SortFunc(infos, byPath)
	}
	for i := 1; i < len(infos); i++ {
		if infos[i].Path == infos[i-1].Path {
			return nil, fmt.Errorf("the server listed %q twice: the listing cannot be trusted", infos[i].Path)
		}
	}
	return infos, nil
}
