package config

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// The notifications: webhooks POSTed after each destination.

var misplacedNotificationFields = map[string]string{"url": "webhook", "secret_env": "webhook"}

func notificationHint(name string) string { return misplacedHint(misplacedNotificationFields, name) }

func (d *decoder) notification(n *yaml.Node, field string, seen map[string]int) (Notification, bool) {
	o := d.object(n, field, notificationFields, notificationHint)
	if o == nil {
		return Notification{}, false
	}
	nt := Notification{Line: n.Line, ID: d.id(o, seen, "notification")}
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
	nt.On = d.distinct(o, "on", "event", "a list of events: published, skipped, failed", "at least one event is required (published, skipped, failed)",
		func(ev string, it *yaml.Node, f string) bool { return d.oneOf(ev, it, f, events) })
	return nt, true
}
