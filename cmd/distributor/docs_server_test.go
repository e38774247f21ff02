package main

// TestDocs's sessions on remote backends: docs-server points an example
// at the test servers of scripts/test-servers.

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// serverVars are the variables .test-servers/env sets for each backend's
// test server.
var serverVars = map[string][]string{
	"s3":    {"DISTRIBUTOR_TEST_S3_ENDPOINT", "DISTRIBUTOR_TEST_S3_BUCKET", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"},
	"gcs":   {"DISTRIBUTOR_TEST_GCS_ENDPOINT", "DISTRIBUTOR_TEST_GCS_BUCKET"},
	"azure": {"DISTRIBUTOR_TEST_AZURE_ENDPOINT", "DISTRIBUTOR_TEST_AZURE_ACCOUNT", "DISTRIBUTOR_TEST_AZURE_KEY", "DISTRIBUTOR_TEST_AZURE_CONTAINER"},
	"ftp":   {"DISTRIBUTOR_TEST_FTP_PROFTPD_ADDR", "DISTRIBUTOR_TEST_FTP_PROFTPD_USER", "DISTRIBUTOR_TEST_FTP_PROFTPD_PASSWORD", "DISTRIBUTOR_TEST_FTP_PROFTPD_CA"},
}

// missingServer says why the test server of the backend kind cannot be
// used, or "" when its variables are set.
func missingServer(kind string) string {
	names, ok := serverVars[kind]
	if !ok {
		return "docs-server: no test server for backend " + kind
	}
	var missing []string
	for _, n := range names {
		if os.Getenv(n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return kind + " test server not configured (" + strings.Join(missing, ", ") +
		" unset): run scripts/test, or scripts/test-servers start and source .test-servers/env"
}

// cmdDocsServer runs "docs-server KIND CONFIG": the destinations of
// backend KIND in the configuration file CONFIG (in the clone) publish to
// the test server instead, each below a prefix of its own (deleted when
// the script ends); everything else stays as the example has it. The
// report's roots read as the example's (s3://bucket/path, ...), and the
// test server's variables are set for the commands (its credentials too,
// for S3). The generated script skips the rest of the document when the
// server is not configured (docScript); under CI=true that fails.
func cmdDocsServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: docs-server s3|gcs|azure|ftp CONFIG")
	}
	kind, file := args[0], ts.MkAbs(args[1])
	if msg := missingServer(kind); msg != "" {
		ts.Fatalf("%s", msg)
	}
	for _, n := range serverVars[kind] {
		ts.Setenv(n, os.Getenv(n))
	}
	if kind == "ftp" {
		ts.Setenv("DISTRIBUTOR_FTP_PASSWORD", os.Getenv("DISTRIBUTOR_TEST_FTP_PROFTPD_PASSWORD"))
	}
	data, err := os.ReadFile(file)
	ts.Check(err)
	var cfg map[string]any
	ts.Check(yaml.Unmarshal(data, &cfg))
	st := ts.Value(docStateKey{}).(*docState)
	for _, d := range cfg["destinations"].([]any) {
		d := d.(map[string]any)
		if d["backend"] != kind {
			continue
		}
		prefix := "docs/" + strings.ToLower(rand.Text()[:10])
		path, _ := d["path"].(string)
		d["path"] = prefix + "/" + path
		// shown: the path as validate shows it, before the example's. On
		// FTP the path is absolute on the server.
		shown := prefix + "/"
		if kind == "ftp" {
			d["path"], shown = "/"+prefix+path, "/"+prefix
		}
		block := d[kind].(map[string]any)
		doc, real := serverBlock(kind, block, prefix)
		d[kind] = block
		st.exact = st.exact && len(doc) == len(real)
		// The root as the report prints it, then as validate does (the path
		// alone).
		st.roots = append(st.roots, [2]string{real, doc}, [2]string{shown, ""})
		ts.Defer(func() { emptyPrefix(kind, prefix) })
	}
	out, err := yaml.Marshal(cfg)
	ts.Check(err)
	ts.Check(os.WriteFile(file, out, 0o644))
}

// serverBlock points the backend block of a destination at the test
// server, and returns how the example's root begins when printed and how
// the test server's does (the destination's path follows both).
func serverBlock(kind string, block map[string]any, prefix string) (doc, real string) {
	get := os.Getenv
	switch kind {
	case "s3":
		doc = "s3://" + block["bucket"].(string) + "/"
		clear(block)
		block["bucket"], block["endpoint"], block["path_style"] = get("DISTRIBUTOR_TEST_S3_BUCKET"), get("DISTRIBUTOR_TEST_S3_ENDPOINT"), true
		block["region"] = cmpOr(get("DISTRIBUTOR_TEST_S3_REGION"), "us-east-1")
		return doc, "s3://" + get("DISTRIBUTOR_TEST_S3_BUCKET") + "/" + prefix + "/"
	case "gcs":
		doc = "gs://" + block["bucket"].(string) + "/"
		clear(block)
		block["bucket"], block["endpoint"], block["anonymous"] = get("DISTRIBUTOR_TEST_GCS_BUCKET"), get("DISTRIBUTOR_TEST_GCS_ENDPOINT"), true
		return doc, "gs://" + get("DISTRIBUTOR_TEST_GCS_BUCKET") + "/" + prefix + "/"
	case "ftp":
		port := "21"
		if p, ok := block["port"]; ok {
			port = fmt.Sprint(p)
		}
		doc = fmt.Sprintf("ftp://%s@%s:%s", block["user"], block["host"], port)
		clear(block)
		host, port, _ := net.SplitHostPort(get("DISTRIBUTOR_TEST_FTP_PROFTPD_ADDR"))
		p, _ := strconv.Atoi(port)
		block["host"], block["port"], block["user"] = host, p, get("DISTRIBUTOR_TEST_FTP_PROFTPD_USER")
		block["ca_file"] = get("DISTRIBUTOR_TEST_FTP_PROFTPD_CA")
		return doc, "ftp://" + get("DISTRIBUTOR_TEST_FTP_PROFTPD_USER") + "@" + get("DISTRIBUTOR_TEST_FTP_PROFTPD_ADDR") + "/" + prefix
	default: // azure
		doc = "azure://" + block["account"].(string) + "/" + block["container"].(string) + "/"
		clear(block)
		block["account"], block["container"] = get("DISTRIBUTOR_TEST_AZURE_ACCOUNT"), get("DISTRIBUTOR_TEST_AZURE_CONTAINER")
		block["endpoint"] = get("DISTRIBUTOR_TEST_AZURE_ENDPOINT")
		return doc, "azure://" + get("DISTRIBUTOR_TEST_AZURE_ACCOUNT") + "/" + get("DISTRIBUTOR_TEST_AZURE_CONTAINER") + "/" + prefix + "/"
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// emptyPrefix deletes what the documents' sessions published below prefix
// on the test server of kind.
func emptyPrefix(kind, prefix string) {
	ctx := context.Background()
	var st storage.Store
	var err error
	switch kind {
	case "s3":
		srv := s3test.Server{Bucket: os.Getenv("DISTRIBUTOR_TEST_S3_BUCKET"), URL: os.Getenv("DISTRIBUTOR_TEST_S3_ENDPOINT"),
			Region: cmpOr(os.Getenv("DISTRIBUTOR_TEST_S3_REGION"), "us-east-1"), Env: map[string]string{
				"AWS_ACCESS_KEY_ID": os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY": os.Getenv("AWS_SECRET_ACCESS_KEY")}}
		st, err = s3.New(ctx, srv.Options(prefix))
	case "gcs":
		srv := gcstest.Server{Endpoint: os.Getenv("DISTRIBUTOR_TEST_GCS_ENDPOINT"), Bucket: os.Getenv("DISTRIBUTOR_TEST_GCS_BUCKET")}
		st, err = gcs.New(ctx, srv.Options(prefix))
	case "azure":
		srv := azuretest.Server{Endpoint: strings.TrimSuffix(os.Getenv("DISTRIBUTOR_TEST_AZURE_ENDPOINT"), "/"),
			Account: os.Getenv("DISTRIBUTOR_TEST_AZURE_ACCOUNT"), Key: os.Getenv("DISTRIBUTOR_TEST_AZURE_KEY"),
			Container: os.Getenv("DISTRIBUTOR_TEST_AZURE_CONTAINER")}
		st, err = azure.New(ctx, srv.Options(prefix))
	case "ftp":
		host, port, _ := net.SplitHostPort(os.Getenv("DISTRIBUTOR_TEST_FTP_PROFTPD_ADDR"))
		p, _ := strconv.Atoi(port)
		st, err = ftp.New(ctx, ftp.Options{Host: host, Port: p, User: os.Getenv("DISTRIBUTOR_TEST_FTP_PROFTPD_USER"),
			Password: ftp.Secret(os.Getenv("DISTRIBUTOR_TEST_FTP_PROFTPD_PASSWORD")), CAFile: os.Getenv("DISTRIBUTOR_TEST_FTP_PROFTPD_CA"), Root: "/" + prefix})
	}
	if err != nil || st == nil {
		return
	}
	defer st.Close()
	var keys []string
	st.List(ctx, "", func(i storage.Info) error {
		keys = append(keys, i.Path)
		return nil
	})
	for _, k := range keys {
		st.Delete(ctx, k)
	}
}
