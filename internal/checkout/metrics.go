package checkout

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
)

// checkoutMetrics are the checkout's counters: how attempts end, what recovery and
// reconciliation do, and how many orders wait for an answer.
type checkoutMetrics struct {
	attempts  *prometheus.CounterVec
	recovered *prometheus.CounterVec
	refunds   prometheus.Counter
	unsettled prometheus.Gauge
	// providerRefunds counts confirmed orders found refunded at Payrail.
	providerRefunds prometheus.Counter
	// orderRefunds counts refunds settled, by reason and outcome.
	orderRefunds *prometheus.CounterVec
	// refundCalls counts the refunds sent to Payrail, retries included.
	refundCalls prometheus.Counter
	// pendingRefunds and unfinishedCancellations are what the refund pass
	// found left to do.
	pendingRefunds          prometheus.Gauge
	unfinishedCancellations prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *checkoutMetrics {
	m := &checkoutMetrics{
		attempts:        metrics.CounterVec(reg, "stagedoor_checkout_attempts_total", "Checkout attempts that wrote an order, by how the attempt left it: confirmed, declined, failed (certainly not charged) or pending (outcome unknown, or not written in time).", "outcome"),
		recovered:       metrics.CounterVec(reg, "stagedoor_recovery_orders_total", "Pending orders recovery looked at, by result: confirmed (Payrail has the charge), declined (Payrail declined it), released (Payrail proves there is none) or unknown (Payrail cannot tell yet, or could not be asked; the order waits).", "result"),
		refunds:         metrics.Counter(reg, "stagedoor_reconciliation_refunds_total", "Charges found at Payrail for orders that were not confirmed (late charges), refunded."),
		providerRefunds: metrics.Counter(reg, "stagedoor_reconciliation_refunded_orders_total", "Confirmed orders whose charge reconciliation found refunded at Payrail (not by Stagedoor): each became refunded, its tickets revoked."),
		unsettled:       metrics.Gauge(reg, "stagedoor_orders_unsettled", "Pending orders older than STAGEDOOR_RECOVERY_AFTER at the last recovery pass: charges whose outcome nobody knows yet. Alert when it stays above 0."),
	}
	m.orderRefunds = metrics.CounterVec(reg, "stagedoor_refunds_total", "Refunds of orders settled, by reason (buyer, organizer, cancellation, payrail: made at Payrail by someone else) and outcome (succeeded; failed: Payrail refused it, nothing refunded).", "reason", "outcome")
	m.refundCalls = metrics.Counter(reg, "stagedoor_refund_payrail_calls_total", "Refunds sent to Payrail, each retry of one counted again (the same Idempotency-Key: one refund at Payrail however often).")
	m.pendingRefunds = metrics.Gauge(reg, "stagedoor_refunds_pending", "Refunds waiting for Payrail's answer at the last refund pass (their tickets refund_pending). Alert when one stays for 10 minutes.")
	m.unfinishedCancellations = metrics.Gauge(reg, "stagedoor_cancellations_unfinished", "Cancelled events whose orders are not all refunded yet, at the last refund pass.")
	for _, reason := range []string{ByBuyer, ByOrganizer, ByCancellation, AtPayrail} {
		for _, outcome := range []string{RefundSucceeded, RefundFailed} {
			m.orderRefunds.WithLabelValues(reason, outcome)
		}
	}
	for _, outcome := range []string{Confirmed, Declined, Failed, Pending} {
		m.attempts.WithLabelValues(outcome)
	}
	for _, result := range []string{"confirmed", "declined", "released", "unknown"} {
		m.recovered.WithLabelValues(result)
	}
	return m
}
