package metrics

import "strings"

// parse reads a previous metrics file's series, dropping unknown lines.
func parse(data []byte) map[key]series {
	known := map[string]bool{}
	for _, f := range families {
		known[f.name] = true
	}
	out := map[key]series{}
	for _, line := range strings.Split(string(data), "\n") {
		name, labels, ok := strings.Cut(line, "{")
		if !ok || !known[name] {
			continue
		}
		end := strings.LastIndex(labels, "} ")
		if end < 0 {
			continue
		}
		l := labelValues(labels[:end])
		k := key{l["pipeline"], l["destination"]}
		if k.pipeline == "" || k.destination == "" {
			continue
		}
		s, ok := out[k]
		if !ok {
			s = series{lines: map[string][]string{}}
		}
		s.lines[name] = append(s.lines[name], line)
		if name == "distributor_last_success_timestamp_seconds" {
			s.lastSuccess = strings.TrimSpace(labels[end+2:])
		}
		out[k] = s
	}
	return out
}

// labelValues parses `a="x",b="y"` (values escaped) into a map.
func labelValues(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		var v strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
				if rest[i] == 'n' {
					v.WriteByte('\n')
					continue
				}
			}
			v.WriteByte(rest[i])
		}
		if i >= len(rest) {
			break
		}
		out[strings.TrimPrefix(name, ",")] = v.String()
		s = strings.TrimPrefix(rest[i+1:], ",")
	}
	return out
}
