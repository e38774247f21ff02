// Command s3count is bench/run's counting reverse proxy in front of an S3,
// GCS or Azure emulator on 127.0.0.1: it forwards every request unchanged
// (Host kept, so SigV4 signatures stay valid) and counts them by method and
// S3 operation (a GCS or Azure listing counts as ListObjects). GET /__count
// returns the counts (?reset=1 restarts them, &mark=NAME labels the -log);
// SIGTERM or SIGINT prints them and exits.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// counter counts requests by method and by S3 operation.
type counter struct {
	mu       sync.Mutex
	total    int
	byMethod map[string]int
	byOp     map[string]int
	log      io.Writer // nil: no request log
}

// Counts is the JSON document GET /__count returns.
type Counts struct {
	Total    int            `json:"total"`
	ByMethod map[string]int `json:"by_method"`
	ByOp     map[string]int `json:"by_op"`
}

// operation roughly names r's S3 op: listing, multipart step, or method.
func operation(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && (q.Has("list-type") || q.Has("prefix") || q.Has("delimiter")):
		return "ListObjects"
	case q.Has("uploads") || q.Has("uploadId"):
		return r.Method + " multipart"
	case q.Has("delete"):
		return "DeleteObjects"
	case q.Has("location"):
		return "GetBucketLocation"
	}
	return r.Method
}

func (c *counter) add(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.byMethod[r.Method]++
	op := operation(r)
	c.byOp[op]++
	if c.log != nil {
		q := r.URL.Query()
		for k := range q {
			if strings.HasPrefix(k, "X-Amz-") {
				q.Del(k)
			}
		}
		line := op + " " + r.Method + " " + r.URL.Path
		if len(q) > 0 {
			line += "?" + q.Encode()
		}
		fmt.Fprintln(c.log, line)
	}
}

// snapshot returns the counts, zeroing them if reset. A mark labels the
// requests logged so far with "== end of MARK: COUNTS ==".
func (c *counter) snapshot(reset bool, mark string) Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Counts{Total: c.total, ByMethod: c.byMethod, ByOp: c.byOp}
	if mark != "" && c.log != nil {
		fmt.Fprintf(c.log, "== end of %s: %s ==\n", mark, s)
	}
	if reset {
		c.total, c.byMethod, c.byOp = 0, map[string]int{}, map[string]int{}
	} else {
		s.ByMethod, s.ByOp = maps.Clone(c.byMethod), maps.Clone(c.byOp)
	}
	return s
}

// String formats counts on one line: "total=N GET=a PUT=b ...".
func (s Counts) String() string {
	out := fmt.Sprintf("total=%d", s.Total)
	for _, k := range slices.Sorted(maps.Keys(s.ByOp)) {
		out += fmt.Sprintf(" %q=%d", k, s.ByOp[k])
	}
	return out
}

func main() {
	target := flag.String("target", "", "URL of the S3 server, e.g. http://127.0.0.1:9000")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback only)")
	addrFile := flag.String("addr-file", "", "file to write the listening host:port to")
	logFile := flag.String("log", "", "file to append one line per forwarded request to")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		log.Fatalf("s3count: -target %q: need an http(s) URL", *target)
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		log.Fatalf("s3count: -listen %q: must be a loopback address", *listen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("s3count: %v", err)
	}
	c := &counter{byMethod: map[string]int{}, byOp: map[string]int{}}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("s3count: %v", err)
		}
		defer f.Close()
		c.log = f
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // keep the signed Host header
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/__count", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c.snapshot(q.Get("reset") == "1", q.Get("mark")))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.add(r)
		proxy.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: mux}
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			log.Fatalf("s3count: %v", err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatalf("s3count: %v", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatalf("s3count: %v", err)
	}
	fmt.Println(c.snapshot(false, ""))
}
