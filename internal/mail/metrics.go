package mail

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
)

// senderMetrics count what the Sender does, and how much waits.
type senderMetrics struct {
	sent    prometheus.Counter
	failed  *prometheus.CounterVec
	backlog prometheus.Gauge
	oldest  prometheus.Gauge
}

func newSenderMetrics(reg prometheus.Registerer) *senderMetrics {
	m := &senderMetrics{
		sent:    metrics.Counter(reg, "stagedoor_mail_sent_total", "Messages the mail server took (it answered 250 to their DATA)."),
		failed:  metrics.CounterVec(reg, "stagedoor_mail_failed_attempts_total", "Failed tries of messages, by reason: unreachable (no connection to the mail server, or it was lost: tried again after a backoff), deferred (the server answered 4xx: tried again), rejected (5xx: given up), unwritable (the message cannot be written: given up).", "reason"),
		backlog: metrics.Gauge(reg, "stagedoor_mail_outbox_backlog", "Messages in the outbox neither sent nor given up, at the last pass of the instance that sends."),
		oldest:  metrics.Gauge(reg, "stagedoor_mail_outbox_oldest_unsent_seconds", "Age of the oldest message neither sent nor given up, at the last pass of the instance that sends (0: none). Alert when it grows."),
	}
	for _, reason := range []failure{unreachable, deferred, rejected, "unwritable"} {
		m.failed.WithLabelValues(string(reason))
	}
	return m
}
