package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/notify"
	"github.com/distributor-dev/distributor/internal/report"
)

// CheckNotifications checks, before a real run, that every webhook's
// secret_env is set; a missing one is a *UsageError, never naming the secret.
func (a *App) CheckNotifications(cfg *config.Config) error {
	missing := a.missingSecrets(cfg)
	if len(missing) == 0 {
		return nil
	}
	return &UsageError{Msg: strings.Join(missing, "\n") +
		"\n(set the variable to the webhook's signing secret, or remove secret_env to send unsigned notifications; nothing was published)"}
}

func (a *App) missingSecrets(cfg *config.Config) []string {
	var missing []string
	for _, n := range cfg.Notifications {
		if n.SecretEnv != "" && a.getenv(n.SecretEnv) == "" {
			missing = append(missing, fmt.Sprintf("notification %s: webhook.secret_env names %s, which is unset or empty", n.ID, n.SecretEnv))
		}
	}
	return missing
}

// notifyPipelineFailed raises "failed" for each destination (only, when set)
// of a pipeline with an invalid bundle; failed deliveries become pipeline
// warnings, as no destination is listed.
func (a *App) notifyPipelineFailed(ctx context.Context, cfg *config.Config, p *config.Pipeline, only string, op *report.Pipeline) {
	for _, id := range selected(p, only) {
		root := ""
		if d, ok := cfg.Destination(id); ok {
			root = d.Path // unexpanded: placeholders need the manifest
		}
		warnUndelivered(op, a.deliver(ctx, cfg, notify.PipelineFailed(op, id, root)), id)
	}
}

// warnUndelivered warns in op of each notification of ns (for destination
// id, which op does not list) that was not sent.
func warnUndelivered(op *report.Pipeline, ns []report.Notification, id string) {
	for _, n := range ns {
		if n.Status != notify.StatusSent {
			op.Warnings = append(op.Warnings, fmt.Sprintf("notification %s (%s) for destination %s %s: %s", n.ID, n.Event, id, n.Status, n.Error))
		}
	}
}

// deliver sends ev to every subscribed notification, in configuration order.
func (a *App) deliver(ctx context.Context, cfg *config.Config, ev notify.Payload) []report.Notification {
	var targets []config.Notification
	for _, n := range cfg.Notifications {
		if slices.Contains(n.On, ev.Event) {
			targets = append(targets, n)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	log := a.Logger.With("event", ev.Event, "pipeline", ev.PipelineID, "destination", ev.DestinationID)
	body, encErr := json.Marshal(ev)
	if encErr != nil {
		encErr = fmt.Errorf("encode the notification body: %w", encErr)
	}
	// Its own http.Client (the default transport, so proxy variables apply;
	// no shared client is modified), notify's default timeout and attempts.
	sender := &notify.Sender{Client: &http.Client{}, UserAgent: "distributor/" + a.Version}
	out := make([]report.Notification, 0, len(targets))
	for _, n := range targets {
		rn := report.Notification{ID: n.ID, Event: ev.Event, Status: notify.StatusSent}
		err, secret := encErr, "" // signed with its secret_env's secret
		if n.SecretEnv != "" {
			secret = a.getenv(n.SecretEnv)
		}
		switch {
		case err != nil:
		case n.SecretEnv != "" && secret == "":
			err = fmt.Errorf("not sent: environment variable %s (webhook.secret_env) is unset or empty", n.SecretEnv)
		default:
			err = sender.Send(ctx, notify.Target{URL: n.URL, Secret: []byte(secret)}, ev.Event, body)
		}
		if err != nil {
			rn.Status, rn.Error = notify.StatusFailed, err.Error()
			log.Warn("notification failed", "notification", n.ID, "err", err)
		} else {
			log.Info("notification sent", "notification", n.ID)
		}
		out = append(out, rn)
	}
	return out
}

func (a *App) getenv(name string) string {
	if a.Getenv == nil {
		return ""
	}
	return a.Getenv(name)
}
