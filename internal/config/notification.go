package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The notifications: webhooks POSTed after each destination.

func notificationHint(name string) string {
	if name == "url" || name == "secret_env" {
		return fmt.Sprintf("unknown field %q; it belongs in the webhook block (webhook.%s)", name, name)
	}
	return ""
}

func (d *decoder) notification(n *yaml.Node, field string, seen map[string]int) (Notification, bool) {
	o := d.object(n, field, notificationFields, notificationHint)
	if o == nil {
		return Notification{}, false
	}
	nt := Notification{Line: n.Line}
	if s, v, ok := d.str(o, "id", true); ok {
		d.slug(s, v, join(field, "id"))
		d.unique(seen, s, v, join(field, "id"), "notification")
		nt.ID = s
	}
	if d.value(o, "webhook") == nil {
		d.required(o, "webhook", "a mapping with url")
	} else if wo := d.sub(o, "webhook", webhookFields, nil); wo != nil {
		if s, v, ok := d.str(wo, "url", true); ok {
			if _, err := httpURL(s); err != nil {
				d.add(v.Line, join(wo.path, "url"), "%v", err)
			} else {
				nt.URL = s
			}
		}
		if s, v, ok := d.str(wo, "secret_env", false); ok {
			f := join(wo.path, "secret_env")
			switch {
			case strings.HasPrefix(s, "$") && envNameRE.MatchString(strings.Trim(s[1:], "{}")):
				d.add(v.Line, f, "%q: write the environment variable's name without $", s)
			case !envNameRE.MatchString(s):
				d.add(v.Line, f, "%q is not an environment variable name (letters, digits and _, not starting with a digit)", s)
			default:
				nt.SecretEnv = s
			}
		}
	}
	items, v, ok := d.list(o, "on", false)
	switch {
	case v == nil:
		d.required(o, "on", "a list of events: published, skipped, failed")
	case ok && len(items) == 0:
		d.add(v.Line, join(field, "on"), "at least one event is required (published, skipped, failed)")
	}
	got := map[string]int{}
	for i, it := range items {
		f := fmt.Sprintf("%s.on[%d]", field, i)
		ev, ok := d.itemString(it, f)
		if !ok || !d.oneOf(ev, it, f, events) {
			continue
		}
		if first, dup := got[ev]; dup {
			d.add(it.Line, f, "event %q is listed twice (first at line %d)", ev, first)
			continue
		}
		got[ev] = it.Line
		nt.On = append(nt.On, ev)
	}
	return nt, true
}
