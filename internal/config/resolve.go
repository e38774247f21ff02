package config

import (
	"fmt"
	"strings"
)

// EnvConfig names the configuration file when no --config flag is given.
const EnvConfig = "DISTRIBUTOR_CONFIG"

// DefaultFile is the configuration file when neither names one.
const DefaultFile = "distributor.yaml"

// Resolve picks the configuration file: flagPath, else getenv(EnvConfig)
// (getenv may be nil), else DefaultFile, as given so that messages show
// what the user wrote. A blank value is an error: surely a mistake.
func Resolve(flagPath string, getenv func(string) string) (string, error) {
	if flagPath != "" {
		if strings.TrimSpace(flagPath) == "" {
			return "", fmt.Errorf("--config %q: blank path", flagPath)
		}
		return flagPath, nil
	}
	if getenv != nil {
		if v := getenv(EnvConfig); v != "" {
			if strings.TrimSpace(v) == "" {
				return "", fmt.Errorf("%s=%q: blank path", EnvConfig, v)
			}
			return v, nil
		}
	}
	return DefaultFile, nil
}

// Starter is the commented starter configuration `distributor config init`
// writes: one pipeline publishing ./out to a local directory, which
// `distributor validate` accepts (with a warning until ./out exists).
const Starter = `# distributor configuration: written by 'distributor config init'.
# Check it with 'distributor validate'; every field is described in the
# README's configuration reference, and 'distributor config schema' prints a
# JSON Schema for editors. Relative paths resolve against this file's
# directory. String values may use ${VAR} to read an environment variable
# (write $$ for a literal $); secrets never go here, only in *_env fields.

pipelines:
  - id: reports                  # a slug: [a-z0-9][a-z0-9._-]{0,63}
    source: ./out                # the bundle directory: manifest.json and its files
                                 # (write one with 'distributor bundle seal ./out --id reports.daily')
    destinations: [site]         # the destination ids below it publishes to

destinations:
  - id: site
    backend: local               # or a remote one: see docs/backends.md
    path: ./public               # the destination root; may use {pipeline_id},
                                 # {destination_id}, {source_id}, {source_date}, {source_created}
    workflow: replacement        # replacement: remove what the new bundle no longer has;
                                 # additive (the default): keep every earlier output
    # max_deletes: 100           # refuse a run that would delete more than this
    publish:
      html: true                 # render Markdown (.md) to HTML pages
      source: assets             # copy: assets (non-Markdown files), all, or none
    # paths: {prefix: "reports/"}
    # links: {base_url: "https://reports.example.com/", pretty: true}

    # An SFTP destination instead:
    # backend: sftp
    # path: /srv/www/reports
    # sftp:
    #   host: ${REPORTS_SFTP_HOST}
    #   user: deploy
    #   identity_file: ~/.ssh/id_ed25519
    #   known_hosts_file: ~/.ssh/known_hosts

    # An S3 destination instead (credentials from the AWS environment):
    # backend: s3
    # path: reports
    # s3:
    #   bucket: ${REPORTS_BUCKET}
    #   region: eu-central-1
    #   endpoint: https://s3.example.com   # omit for AWS

# notifications:
#   - id: ops
#     webhook:
#       url: https://hooks.example.com/distributor
#       secret_env: DISTRIBUTOR_WEBHOOK_SECRET   # the variable holding the signing secret
#     on: [failed]

# Each real run's metrics, in Prometheus text format (for node_exporter's
# textfile collector; 'run --metrics-file' overrides it):
# metrics_file: /var/lib/node_exporter/textfile/distributor.prom
`
