package storage

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A backend states its block once, as a block struct: a field per member
// in the documented order, tagged block:"NAME[,required][,file][,url]"
// (file: a local file's path; url: an http(s) URL without credentials,
// query or fragment) and as needed why:"a required member's purpose",
// default:"22", min:"1" and max:"65535" (an int's range, a string's least
// length), pattern:"^...$", invalid:"what a value out of range or pattern
// is not" (without it, the schema's only: the backend checks the value),
// creds:"where a url's credentials come from", query:"where its query
// goes". The Go type (string, bool, int, time.Duration) says how a member
// is read. Backend.Fields and Decode derive from it. schema.json stays a
// file for its descriptions and key order (`config schema` prints its
// bytes); tests check the rest against the struct, -update rewrites it.

// BlockFields returns the member names of block struct v, in field order.
func BlockFields(v any) (names []string) {
	for f := range reflect.TypeOf(v).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("block"), ","); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// DecodeBlock reads b into the block struct dst points to, through b's
// methods, which report each problem. check, if not nil, gets each member
// whose value passed its tags, to check or rewrite it; false zeroes the
// field, refused with its invalid tag's message or as check reported. A
// pattern compiles only when a block has its member, not at every start.
func DecodeBlock(b Block, dst any, check func(b Block, name string) bool) {
	for f, v := range reflect.ValueOf(dst).Elem().Fields() {
		name, flags, _ := strings.Cut(f.Tag.Get("block"), ",")
		if name == "" || !readMember(b, f, v, name, ","+flags+",") {
			continue
		}
		invalid := f.Tag.Get("invalid")
		if v.Kind() == reflect.String && invalid != "" && !regexp.MustCompile(f.Tag.Get("pattern")).MatchString(v.String()) ||
			check != nil && !check(b, name) {
			if invalid != "" {
				b.Errorf(name, "%q is not a valid %s", v.String(), invalid)
			}
			v.SetZero()
		}
	}
}

// readMember reads member name into field f's value v (flags: its block
// tag's, within commas); it reports whether it set a value.
func readMember(b Block, f reflect.StructField, v reflect.Value, name, flags string) bool {
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(b.Duration(name)))
		return v.Int() != 0
	case v.Kind() == reflect.Bool:
		v.SetBool(b.Bool(name, f.Tag.Get("default") == "true"))
		return true
	case v.Kind() == reflect.Int:
		lo, _ := strconv.ParseInt(f.Tag.Get("min"), 10, 64)
		hi, err := strconv.ParseInt(f.Tag.Get("max"), 10, 64)
		n, ok := b.Int(name)
		if ok && err == nil && (n < lo || n > hi) {
			b.Errorf(name, "%d is not %s (%d to %d)", n, f.Tag.Get("invalid"), lo, hi)
			ok = false
		}
		if !ok {
			n, _ = strconv.ParseInt(f.Tag.Get("default"), 10, 64)
		}
		v.SetInt(n)
		return ok
	}
	required := strings.Contains(flags, ",required,")
	if why := f.Tag.Get("why"); why != "" && !b.Has(name) {
		b.Require(name, why)
		return false
	}
	s, ok := b.String(name, required)
	switch {
	case !ok || s == "" && !required:
		return false
	case strings.Contains(flags, ",file,"):
		s = b.LocalPath(name, s)
		ok = s != ""
	case strings.Contains(flags, ",url,"):
		u, isURL := b.URL(name, s)
		ok = isURL && u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == ""
		if isURL && u.User != nil {
			b.Errorf(name, "%q must not contain credentials (they come from %s)", s, f.Tag.Get("creds"))
		} else if isURL && !ok {
			b.Errorf(name, "%q must not have a query or fragment%s", s, strings.TrimSuffix(" ("+f.Tag.Get("query")+")", " ()"))
		}
	}
	if ok {
		v.SetString(s)
	}
	return ok
}
