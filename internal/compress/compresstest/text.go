// Package compresstest generates the report text that precompression is
// measured on (the P1 workload of issue 36): HTML pages, CSV tables and JSON
// documents, deterministic for a seed, shared by internal/compress's tests
// and bench/gen.
package compresstest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// words is the vocabulary of the generated reports' prose and labels.
var words = []string{
	"revenue", "quarter", "region", "north", "south", "east", "west", "total", "margin",
	"growth", "forecast", "actual", "budget", "variance", "customer", "orders", "units",
	"average", "median", "report", "summary", "daily", "weekly", "monthly", "product",
	"category", "service", "support", "tickets", "resolved", "pending", "latency", "errors",
	"requests", "capacity", "storage", "network", "compute", "cost", "savings", "the", "of",
	"and", "in", "for", "with", "was", "were", "compared", "previous", "period", "increase",
	"decrease", "stable", "above", "below", "target", "threshold", "alert", "incident",
}

// ReportText returns the i-th file of the P1 workload: about size bytes of
// report text, an HTML page, a CSV table or a JSON document by i mod 3, the
// same for the same (seed, i, size) on every machine.
func ReportText(seed uint64, i, size int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	var b bytes.Buffer
	b.Grow(size + 4096)
	word := func() string { return words[r.IntN(len(words))] }
	switch i % 3 {
	case 0:
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Report %d: %s %s</title>\n", i, word(), word())
		b.WriteString("<link rel=\"stylesheet\" href=\"../assets/style.css\">\n</head>\n<body>\n<main class=\"report\">\n")
		for row := 0; b.Len() < size; row++ {
			if row%25 == 0 {
				fmt.Fprintf(&b, "<h2 id=\"section-%d\">%s %s</h2>\n<p>", row/25, word(), word())
				for k := 0; k < 30+r.IntN(40); k++ {
					b.WriteString(word())
					b.WriteByte(' ')
				}
				b.WriteString("</p>\n<table class=\"data\">\n<thead><tr><th>Date</th><th>Region</th><th>Units</th><th>Revenue</th><th>Change</th></tr></thead>\n<tbody>\n")
			}
			fmt.Fprintf(&b, "<tr class=\"row\"><td class=\"date\">2026-%02d-%02d</td><td class=\"region\">%s</td><td class=\"num\">%d</td><td class=\"num\">%.2f</td><td class=\"num %s\">%+.1f%%</td></tr>\n",
				1+r.IntN(12), 1+r.IntN(28), word(), r.IntN(10000), r.Float64()*1e5, []string{"up", "down"}[r.IntN(2)], r.NormFloat64()*5)
			if row%25 == 24 {
				b.WriteString("</tbody>\n</table>\n")
			}
		}
		b.WriteString("</main>\n</body>\n</html>\n")
	case 1:
		b.WriteString("date,region,product,units,revenue,cost,margin\n")
		for b.Len() < size {
			fmt.Fprintf(&b, "2026-%02d-%02d,%s,%s-%03d,%d,%.2f,%.2f,%.3f\n",
				1+r.IntN(12), 1+r.IntN(28), word(), word(), r.IntN(200), r.IntN(5000), r.Float64()*1e4, r.Float64()*8e3, r.Float64())
		}
	default:
		fmt.Fprintf(&b, "{\n  \"report\": %d,\n  \"title\": \"%s %s\",\n  \"rows\": [\n", i, word(), word())
		for first := true; b.Len() < size; first = false {
			if !first {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "    {\"id\": %d, \"region\": \"%s\", \"metric\": \"%s\", \"value\": %.4f, \"count\": %d, \"ok\": %t}",
				r.IntN(1e6), word(), word(), r.Float64()*1e3, r.IntN(1000), r.IntN(4) != 0)
		}
		b.WriteString("\n  ]\n}\n")
	}
	return b.Bytes()
}

// Ext is the file extension of ReportText's i-th file: .html, .csv or .json.
func Ext(i int) string { return []string{".html", ".csv", ".json"}[i%3] }
