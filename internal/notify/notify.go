// Package notify delivers webhook notifications (spec section 9): a JSON
// body POSTed, optionally HMAC-SHA256 signed, retried with backoff on
// network errors and 5xx. Callers pass secrets and the *http.Client.
package notify

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/backoff"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

// Header names set on every delivery.
const (
	SignatureHeader = "X-Distributor-Signature" // when the target has a secret
	EventHeader     = "X-Distributor-Event"
)

// Delivery outcomes, as recorded in report.Notification.Status.
const (
	StatusSent   = "sent"
	StatusFailed = "failed"
)

// Defaults of a Sender.
const (
	DefaultAttempts = 3
	DefaultTimeout  = 10 * time.Second
)

// Payload is a notification, its JSON the body POSTed: a stable contract.
// Event is config.EventPublished, EventSkipped or EventFailed.
type Payload struct {
	Event         string         `json:"event"`
	PipelineID    string         `json:"pipeline_id"`
	DestinationID string         `json:"destination_id"`
	Action        string         `json:"action"`
	Root          string         `json:"root"`
	PrimaryURL    string         `json:"primary_url"`
	Counts        plan.Counts    `json:"counts"`
	Source        *report.Source `json:"source"`
	Error         *string        `json:"error"`
	URLs          URLs           `json:"urls"`
}

// Sign returns "sha256=" and the hex HMAC-SHA256 of the exact body bytes.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Target is where one notification goes.
type Target struct {
	URL string
	// Secret signs the body when non-empty; never logged nor in a message.
	Secret []byte
}

// Sender delivers notifications. Client is required; the rest default.
type Sender struct {
	// Client sends the requests. Its redirect policy is not used: a
	// redirect is reported as a failure, so a signed body is never
	// re-sent to another URL (and a 302 never turns the POST into a GET).
	Client    *http.Client
	UserAgent string
	Attempts  int           // in total
	Timeout   time.Duration // per attempt, response status included
	// Backoff returns the wait before retry n (1 for the first retry).
	Backoff func(retry int) time.Duration
}

// DefaultBackoff waits 1s, doubling up to 64s.
func DefaultBackoff(retry int) time.Duration {
	return backoff.Policy{Base: time.Second, Max: 64 * time.Second}.Wait(retry)
}

// Error is a delivery that failed after its last attempt.
type Error struct {
	// Host is the target's scheme and host: the URL's path and query may
	// carry tokens, so they are never part of a message.
	Host     string
	Attempts int
	// StatusCode is the last HTTP status, or 0 for a network error.
	StatusCode int
	Err        error
}

func (e *Error) Error() string {
	return fmt.Sprintf("POST to %s: %v (%d attempt(s))", e.Host, e.Err, e.Attempts)
}

func (e *Error) Unwrap() error { return e.Err }

// attemptError is the outcome of one attempt; err is nil on success.
type attemptError struct {
	err       error
	status    int
	retryable bool
}

// Send POSTs body to t.URL, signed when t.Secret is set. 2xx is success;
// network errors, timeouts and 5xx are retried, other statuses fail at once.
// The error is an *Error.
func (s *Sender) Send(ctx context.Context, t Target, event string, body []byte) error {
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Error{Host: "(invalid URL)", Err: errors.New("the webhook URL must be an absolute http:// or https:// URL")}
	}
	host := u.Scheme + "://" + u.Host
	if s.Client == nil {
		return &Error{Host: host, Err: errors.New("no HTTP client configured")}
	}
	attempts := cmp.Or(max(s.Attempts, 0), DefaultAttempts)
	wait := s.Backoff
	if wait == nil {
		wait = DefaultBackoff
	}
	// A shallow copy, so that the caller's client is never modified.
	client := *s.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	var last attemptError
	n := 0
	for n < attempts {
		if n > 0 {
			if err := backoff.Sleep(ctx, wait(n)); err != nil {
				last = attemptError{err: fmt.Errorf("gave up waiting to retry: %w", err)}
				break
			}
		}
		n++
		last = s.attempt(ctx, &client, t, event, body)
		if last.err == nil || !last.retryable || ctx.Err() != nil {
			break
		}
	}
	if last.err == nil {
		return nil
	}
	return &Error{Host: host, Attempts: n, StatusCode: last.status, Err: last.err}
}

func (s *Sender) attempt(ctx context.Context, client *http.Client, t Target, event string, body []byte) attemptError {
	timeout := cmp.Or(max(s.Timeout, 0), DefaultTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return attemptError{err: fmt.Errorf("build request: %w", stripURL(err))}
	}
	req.Header.Set("Content-Type", "application/json")
	if s.UserAgent != "" {
		req.Header.Set("User-Agent", s.UserAgent)
	}
	if event != "" {
		req.Header.Set(EventHeader, event)
	}
	if len(t.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(t.Secret, body))
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no response within %s", timeout)
		} else {
			err = stripURL(err)
		}
		return attemptError{err: err, retryable: true}
	}
	defer resp.Body.Close()
	// Read a little of the body, for the message and connection reuse.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return attemptError{status: resp.StatusCode}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return attemptError{status: resp.StatusCode,
			err: fmt.Errorf("HTTP %s: redirects are not followed (configure the final URL)", resp.Status)}
	}
	msg := fmt.Sprintf("HTTP %s", resp.Status)
	if s := printable(snippet); s != "" {
		msg += ": " + s
	}
	return attemptError{status: resp.StatusCode, err: errors.New(msg), retryable: resp.StatusCode >= 500}
}

// stripURL drops a *url.Error's URL: its path or query may hold a token.
func stripURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// printable is a body's first line, cut to 200 bytes, non-printables replaced.
func printable(b []byte) string {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = append(b[:200:200], "..."...)
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return '?'
		}
		return r
	}, string(b))
}

// MaxURLs bounds each URL list of a payload: a receiver that needs more
// (a first publish of a large site) sees the totals and purges by prefix.
const MaxURLs = 100

// URLs is the payload's changed URLs: up to MaxURLs of each, the totals.
type URLs struct {
	Written      []string `json:"written"`
	Deleted      []string `json:"deleted"`
	WrittenTotal int      `json:"written_total"`
	DeletedTotal int      `json:"deleted_total"`
	// Truncated: a list was cut, or outputs without a URL were not listed.
	Truncated bool `json:"truncated"`
}

// EventOf returns the notification a finished destination of pipeline p
// raises, and false when it raises none (a dry run's planned status).
func EventOf(p *report.Pipeline, d *report.Destination) (Payload, bool) {
	var action plan.Action
	if d.Plan != nil {
		action = d.Plan.Action
	}
	name := eventName(action, d.Status)
	if name == "" {
		return Payload{}, false
	}
	ev := Payload{Event: name, PipelineID: p.PipelineID, DestinationID: d.DestinationID,
		Action: string(action), Root: d.Root, PrimaryURL: d.PrimaryURL, Counts: d.Counts,
		Source: p.Source, URLs: urlsOf(d.ChangedURLs())}
	_, ev.Error = report.Errors(d.Err) // the whole error
	return ev, true
}

// PipelineFailed is the "failed" notification of a destination of pipeline p
// whose bundle is invalid; root is unexpanded (placeholders need the manifest).
func PipelineFailed(p *report.Pipeline, destinationID, root string) Payload {
	ev := Payload{Event: config.EventFailed, PipelineID: p.PipelineID, DestinationID: destinationID,
		Root: root, Source: p.Source, URLs: urlsOf(nil, nil, 0, 0)}
	_, ev.Error = report.Errors(p.Err)
	return ev
}

func eventName(a plan.Action, status string) string {
	switch {
	case status == report.StatusFailed || a.Failed():
		return config.EventFailed
	case status != report.StatusOK:
		return ""
	case a == plan.SkipSame:
		return config.EventSkipped
	case a == plan.PublishNew, a == plan.UpsertAdditive, a == plan.ReplaceCatalog, a == plan.ForceReplace:
		return config.EventPublished
	}
	return ""
}

// urlsOf lists the changed URLs (see ChangedURLs) up to MaxURLs of each.
func urlsOf(written, deleted []string, writtenTotal, deletedTotal int) URLs {
	cut := len(written) > MaxURLs || len(deleted) > MaxURLs ||
		len(written) < writtenTotal || len(deleted) < deletedTotal
	return URLs{Written: bounded(written), Deleted: bounded(deleted),
		WrittenTotal: writtenTotal, DeletedTotal: deletedTotal, Truncated: cut}
}

// bounded is the first MaxURLs of urls, never nil.
func bounded(urls []string) []string {
	if len(urls) > MaxURLs {
		urls = urls[:MaxURLs]
	}
	return append([]string{}, urls...)
}
