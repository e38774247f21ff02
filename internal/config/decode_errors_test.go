package config

import "strings"

// decodeErrCase is a configuration Decode must refuse, and the problem it
// must report.
type decodeErrCase struct {
	name  string
	yaml  string
	line  int
	field string
	msg   string
	n     int // number of problems; 0 means 1
}

// minimalPlus is minimal with extra lines in its destination; extra starts
// at line 9.
func minimalPlus(extra string) string { return minimal + extra }

// decodeFieldErrs: unknown, misplaced and legacy fields, ids, and references
// from pipelines to destinations.
func decodeFieldErrs() []decodeErrCase {
	dest := minimalPlus
	return []decodeErrCase{
		{"unknown field suggests", dest("    worklfow: additive\n"), 9, "destinations[0]", `unknown field "worklfow"; did you mean "workflow"?`, 0},
		{"misspelled required field", strings.Replace(minimal, "    source:", "    sorce:", 1), 3, "pipelines[0]", `unknown field "sorce"; did you mean "source"?`, 0},
		{"unknown top-level field", "pipeline: []\n" + minimal, 1, "", `unknown field "pipeline"; did you mean "pipelines"?`, 0},
		{"unknown field no suggestion", dest("    colour: blue\n"), 9, "destinations[0]", `unknown field "colour"`, 0},
		{"misplaced field", dest("    bucket: x\n"), 9, "destinations[0]", `belongs in the s3 or gcs block (s3.bucket or gcs.bucket)`, 0},
		{"legacy state", dest("    state: shared_root\n"), 9, "destinations[0]", `field "state" is no longer supported: ownership is recorded in the catalog; use workflow: additive or workflow: replacement`, 0},
		{"legacy reconciliation", dest("    reconciliation: strict\n"), 9, "destinations[0]", `"reconciliation" is no longer supported`, 0},
		{"legacy takeover", dest("    takeover: true\n"), 9, "destinations[0]", `"takeover" is no longer supported`, 0},
		{"legacy transfer", dest("    transfer: {mode: copy}\n"), 9, "destinations[0]", `"transfer" is no longer supported`, 0},
		{"bad slug", strings.Replace(minimal, "id: p", "id: Weather_Report!", 1), 2, "pipelines[0].id", `"Weather_Report!" is not a valid id`, 0},
		{"slug too long", strings.Replace(minimal, "id: p", "id: "+strings.Repeat("a", 65), 1), 2, "pipelines[0].id", `is not a valid id`, 0},
		{"duplicate destination id", dest("  - id: d\n    backend: local\n    path: /x\n"), 9, "destinations[1].id", `duplicate destination id "d" (first defined at line 6)`, 0},
		{"duplicate pipeline id", strings.Replace(minimal, "destinations:\n  - id: d", "  - {id: p, source: /s, destinations: [d]}\ndestinations:\n  - id: d", 1), 5, "pipelines[1].id", `duplicate pipeline id "p" (first defined at line 2)`, 0},
		{"duplicate notification id", minimal + "notifications:\n  - {id: n, webhook: {url: http://h/}, on: [failed]}\n  - {id: n, webhook: {url: http://h/}, on: [failed]}\n", 11, "notifications[1].id", `duplicate notification id "n" (first defined at line 10)`, 0},
		{"unknown destination", strings.Replace(minimal, "[d]", "[d, dd]", 1), 4, "pipelines[0].destinations[1]", `unknown destination "dd"`, 0},
		{"unknown destination suggests", strings.Replace(strings.Replace(minimal, "[d]", "[lates]", 1), "id: d", "id: latest", 1), 4, "pipelines[0].destinations[0]", `unknown destination "lates"; did you mean "latest"?`, 0},
		{"destination listed twice", strings.Replace(minimal, "[d]", "[d, d]", 1), 4, "pipelines[0].destinations[1]", `destination "d" is listed twice (first at line 4)`, 0},
		{"pipeline without destinations", strings.Replace(minimal, "    destinations: [d]\n", "", 1), 2, "pipelines[0].destinations", `is required`, 0},
		{"pipeline with empty destinations", strings.Replace(minimal, "[d]", "[]", 1), 4, "pipelines[0].destinations", `at least one destination id is required`, 0},
		{"missing source", strings.Replace(minimal, "    source: ./bundle\n", "", 1), 2, "pipelines[0].source", `is required`, 0},
	}
}

// decodeDestinationErrs: backends and their blocks, destination paths,
// timeouts, workflow and publish.
func decodeDestinationErrs() []decodeErrCase {
	dest := minimalPlus
	return []decodeErrCase{
		{"missing sftp block", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv", 1), 7, "destinations[0].sftp", `backend sftp needs an sftp block`, 0},
		{"missing s3 block", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3", 1), 7, "destinations[0].s3", `backend s3 needs an s3 block (with bucket)`, 0},
		{"forbidden s3 block", dest("    s3: {bucket: reports}\n"), 9, "destinations[0].s3", `only allowed with backend: s3 (this destination's backend is local)`, 0},
		{"forbidden sftp block", dest("    sftp:\n      host: h\n"), 9, "destinations[0].sftp", `only allowed with backend: sftp`, 0},
		{"relative sftp path", strings.Replace(minimal, "backend: local", "backend: sftp\n    sftp: {host: h, user: u, known_hosts_file: kh}", 1), 9, "destinations[0].path", `"./out" must be an absolute path on the server`, 0},
		{"leading slash s3 path", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    path: /reports\n    s3: {bucket: reports}", 1), 8, "destinations[0].path", `"/reports" must be a key prefix without a leading /`, 0},
		{"dotdot s3 path", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    path: a/../b\n    s3: {bucket: reports}", 1), 8, "destinations[0].path", `has a ".." segment`, 0},
		{"double slash s3 path", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    path: a//b\n    s3: {bucket: reports}", 1), 8, "destinations[0].path", `empty segment`, 0},
		{"missing local path", strings.Replace(minimal, "    path: ./out\n", "", 1), 6, "destinations[0].path", `is required`, 0},
		{"bad backend", strings.Replace(minimal, "backend: local", "backend: gopher", 1), 7, "destinations[0].backend", `"gopher" is not one of local, sftp, s3`, 0},
		{"missing backend", strings.Replace(minimal, "    backend: local\n", "", 1), 6, "destinations[0].backend", `is required (local, sftp, s3`, 0},
		{"zero sftp keepalive", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: h, user: u, known_hosts_file: kh, keepalive_timeout: 0s}", 1), 9, "destinations[0].sftp.keepalive_timeout", `must be greater than zero`, 0},
		{"bad s3 idle timeout", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    s3: {bucket: reports, idle_timeout: 30 seconds}", 1), 8, "destinations[0].s3.idle_timeout", `invalid duration`, 0},
		{"single_writer not bool", dest("    single_writer: yes please\n"), 9, "destinations[0].single_writer", `must be true or false`, 0},
		{"bad workflow", dest("    workflow: replace\n"), 9, "destinations[0].workflow", `"replace" is not one of additive, replacement; did you mean "replacement"?`, 0},
		{"bad workflow suggests", dest("    workflow: additve\n"), 9, "destinations[0].workflow", `did you mean "additive"?`, 0},
		{"bad publish.source", dest("    publish:\n      source: everything\n"), 10, "destinations[0].publish.source", `"everything" is not one of all, assets, none`, 0},
		{"publish.html not bool", dest("    publish:\n      html: \"yes\"\n"), 10, "destinations[0].publish.html", `must be true or false, not the string "yes"`, 0},
	}
}

// decodePathErrs: placeholders, paths.prefix and paths.rename, links and
// retention.
func decodePathErrs() []decodeErrCase {
	dest := minimalPlus
	return []decodeErrCase{
		{"bad placeholder", strings.Replace(minimal, "./out", "./out/{nope}", 1), 8, "destinations[0].path", `unknown placeholder "{nope}"`, 0},
		{"unclosed placeholder", dest("    paths:\n      prefix: \"{source_date/\"\n"), 10, "destinations[0].paths.prefix", `unclosed "{"`, 0},
		{"unmatched brace", dest("    paths: {prefix: \"a}/\"}\n"), 9, "destinations[0].paths.prefix", `unmatched "}"`, 0},
		{"placeholder in source", strings.Replace(minimal, "./bundle", "./bundle/{source_id}", 1), 3, "pipelines[0].source", `placeholder {source_id} is not allowed here: placeholders are only allowed in path and paths.prefix`, 0},
		{"placeholder in template", dest("    markdown: {template: \"{pipeline_id}.tmpl\"}\n"), 9, "destinations[0].markdown.template", `only allowed in path and paths.prefix`, 0},
		{"bad prefix", dest("    paths: {prefix: \"../\"}\n"), 9, "destinations[0].paths.prefix", `has a ".." segment`, 0},
		{"absolute prefix", dest("    paths: {prefix: /abs/}\n"), 9, "destinations[0].paths.prefix", `is absolute`, 0},
		{"rename key unclean", dest("    paths:\n      rename:\n        /report.md: index.md\n"), 11, `destinations[0].paths.rename["/report.md"]`, `source path "/report.md" is not clean`, 0},
		{"rename value reserved", dest("    paths:\n      rename:\n        report.md: .distributor.json\n"), 11, `destinations[0].paths.rename["report.md"]`, `reserved`, 0},
		{"rename targets unique", dest("    paths:\n      rename:\n        a.md: x.md\n        b.md: x.md\n"), 12, `destinations[0].paths.rename["b.md"]`, `output path "x.md" is already the target of another rename (line 11)`, 0},
		{"rename not a mapping", dest("    paths:\n      rename: [a, b]\n"), 10, "destinations[0].paths.rename", `must be a mapping of source path to output path, not a list`, 0},
		{"bad base_url scheme", dest("    links:\n      base_url: ftp://example.com/x/\n"), 10, "destinations[0].links.base_url", `must be an absolute http:// or https:// URL`, 0},
		{"relative base_url", dest("    links: {base_url: /reports/}\n"), 9, "destinations[0].links.base_url", `must be an absolute http:// or https:// URL`, 0},
		{"base_url with query", dest("    links: {base_url: \"https://e.com/?a=1\"}\n"), 9, "destinations[0].links.base_url", `must not have a query or fragment`, 0},
		{"bad links.missing", dest("    links: {missing: error}\n"), 9, "destinations[0].links.missing", `"error" is not one of warn, fail`, 0},
		{"misplaced missing", dest("    missing: fail\n"), 9, "destinations[0]", `it belongs in the links block (links.missing)`, 0},
		{"bad duration unit", dest("    retention:\n      prune:\n        older_than: 30x\n"), 11, "destinations[0].retention.prune.older_than", `unknown unit "x"`, 0},
		{"duration without unit", dest("    retention:\n      prune:\n        older_than: 30\n"), 11, "destinations[0].retention.prune.older_than", `missing unit after 30`, 0},
		{"zero duration", dest("    retention: {prune: {older_than: 0d}}\n"), 9, "destinations[0].retention.prune.older_than", `must be greater than zero`, 0},
		{"prune needs older_than", dest("    retention:\n      prune:\n        keep_min: 3\n"), 10, "destinations[0].retention.prune.older_than", `is required`, 0},
		{"negative keep_min", dest("    retention:\n      prune:\n        older_than: 1d\n        keep_min: -1\n"), 12, "destinations[0].retention.prune.keep_min", `must be 0 or more, not -1`, 0},
		{"keep_min not a number", dest("    retention: {prune: {older_than: 1d, keep_min: five}}\n"), 9, "destinations[0].retention.prune.keep_min", `must be a whole number, not the string "five"`, 0},
	}
}

// decodeBlockAndNotificationErrs: sftp and s3 block values, then
// notifications.
func decodeBlockAndNotificationErrs() []decodeErrCase {
	return []decodeErrCase{
		{"bad port", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp:\n      host: h\n      port: 70000\n      user: u\n      known_hosts_file: kh", 1), 11, "destinations[0].sftp.port", `70000 is not a TCP port (1 to 65535)`, 0},
		{"port as string", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: h, port: \"22\", user: u, known_hosts_file: kh}", 1), 9, "destinations[0].sftp.port", `must be a whole number`, 0},
		{"host with port", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: \"h:22\", user: u, known_hosts_file: kh}", 1), 9, "destinations[0].sftp.host", `put the port in sftp.port`, 0},
		{"sftp missing host user known_hosts", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp:\n      port: 22", 1), 9, "destinations[0].sftp.host", `is required`, 3},
		{"sftp missing known_hosts_file", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp:\n      host: h\n      user: u", 1), 9, "destinations[0].sftp.known_hosts_file", `is required (host keys are always verified)`, 0},
		{"bad bucket", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    s3:\n      bucket: My_Bucket", 1), 9, "destinations[0].s3.bucket", `"My_Bucket" is not a valid bucket name`, 0},
		{"bad endpoint", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    s3:\n      bucket: reports\n      endpoint: 127.0.0.1:9000", 1), 10, "destinations[0].s3.endpoint", `must be an absolute http:// or https:// URL`, 0},
		{"bad notification event", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n    on: [published, sucess]\n", 12, "notifications[0].on[1]", `"sucess" is not one of published, skipped, failed`, 0},
		{"duplicate notification event", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n    on:\n      - failed\n      - failed\n", 14, "notifications[0].on[1]", `event "failed" is listed twice (first at line 13)`, 0},
		{"empty notification events", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n    on: []\n", 12, "notifications[0].on", `at least one event is required`, 0},
		{"missing notification events", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n", 10, "notifications[0].on", `is required`, 0},
		{"bad secret_env", minimal + "notifications:\n  - id: n\n    webhook:\n      url: https://h/\n      secret_env: MY-SECRET\n    on: [failed]\n", 13, "notifications[0].webhook.secret_env", `"MY-SECRET" is not an environment variable name`, 0},
		{"secret_env with dollar", minimal + "notifications:\n  - id: n\n    webhook:\n      url: https://h/\n      secret_env: $SECRET\n    on: [failed]\n", 13, "notifications[0].webhook.secret_env", `without $`, 0},
		{"bad webhook url", minimal + "notifications:\n  - id: n\n    webhook: {url: \"hooks.example.com\"}\n    on: [failed]\n", 11, "notifications[0].webhook.url", `must be an absolute http:// or https:// URL`, 0},
		{"url outside webhook", minimal + "notifications:\n  - id: n\n    url: https://h/\n    webhook: {url: https://h/}\n    on: [failed]\n", 11, "notifications[0]", `belongs in the webhook block (webhook.url)`, 0},
		{"missing webhook", minimal + "notifications:\n  - id: n\n    on: [failed]\n", 10, "notifications[0].webhook", `is required`, 0},
	}
}

// decodeDocumentErrs: wrong types, empty or invalid documents, and YAML
// features that are refused.
func decodeDocumentErrs() []decodeErrCase {
	dest := minimalPlus
	return []decodeErrCase{
		{"wrong type string for list", strings.Replace(minimal, "[d]", "d", 1), 4, "pipelines[0].destinations", `must be a list, not the string "d" (write [d])`, 0},
		{"wrong type list for string", strings.Replace(minimal, "id: p", "id: [p]", 1), 2, "pipelines[0].id", `must be a string, not a list`, 0},
		{"wrong type pipelines mapping", "pipelines: {id: p}\n", 1, "pipelines", `must be a list, not a mapping`, 0},
		{"empty pipelines", "pipelines: []\n", 1, "pipelines", `at least one pipeline is required`, 0},
		{"missing pipelines", "destinations: []\n", 1, "pipelines", `at least one pipeline is required`, 0},
		{"empty file", "", 0, "pipelines", `at least one pipeline is required`, 0},
		{"not a mapping", "- a\n- b\n", 1, "", `the configuration must be a mapping`, 0},
		{"invalid yaml", "pipelines:\n  - id: p\nsource x\ndestinations: []\n", 3, "", `invalid YAML`, 0},
		{"repeated field", dest("    path: ./other\n"), 9, "destinations[0].path", `set twice (first at line 8)`, 0},
		{"two documents", minimal + "---\npipelines: []\n", 9, "", `second YAML document`, 0},
		{"merge key", "base: &b {backend: local, path: /x}\n" + minimal, 1, "", `unknown field "base"`, 0},
		{"merge key in destination", dest("    <<: {workflow: additive}\n"), 9, "destinations[0]", `merge keys (<<) are not supported`, 0},
		{"tilde user", strings.Replace(minimal, "./bundle", "~bob/bundle", 1), 3, "pipelines[0].source", `not ~user`, 0},
		{"on as key in the wrong place", dest("    on: [failed]\n"), 9, "destinations[0]", `unknown field "on"`, 0},
	}
}
