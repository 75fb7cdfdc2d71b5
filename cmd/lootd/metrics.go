package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/onceproof/onceproof/ref/loot"
)

// metrics are lootd's Prometheus series. The source document's three
// (8.4): settle success rate (lootd_settles_total by outcome), settle
// duration (lootd_settle_duration_seconds), PENDING backlog
// (lootd_grants_pending); and claims by result, lock contention and
// health, and compensation deliveries.
type metrics struct {
	reg           *prometheus.Registry
	settles       *prometheus.CounterVec
	settleSeconds *prometheus.HistogramVec
	claims        *prometheus.CounterVec
	locks         *prometheus.CounterVec
	releases      *prometheus.CounterVec
	lock          *lockState
	deliveries    *prometheus.CounterVec
	recovers      *prometheus.CounterVec
	http          httpMetrics
}

// pendingTimeout bounds the backlog count a scrape waits for: under
// Prometheus's default 10s scrape timeout, and far above a COUNT over an
// index.
const pendingTimeout = 3 * time.Second

func newMetrics(pending func(context.Context) (int, error), log *slog.Logger) *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		reg: prometheus.NewRegistry(),
		settles: counter("lootd_settles_total",
			"Settle attempts by trigger (api: POST /api/loot/settle; deadline: the settle loop) and outcome (settled: this call recorded the result; else the error code it got).",
			"trigger", "outcome"),
		settleSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lootd_settle_duration_seconds",
			Help: "Duration of settles that recorded the result (outcome settled), lock to last delivery.",
			// 1ms (an in-memory settle) doubling to 16s (far past a lease
			// a settle should ever approach).
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"trigger"}),
		claims: counter("lootd_claims_total",
			"Claims (POST /api/loot/intent) by result: accepted, or the error code of the refusal.", "result"),
		locks: counter("lootd_lock_acquires_total",
			"Settle lock acquisitions by result: acquired, contended (held by another settler), error (a timeout included: the settle went on to the CAS).", "result"),
		releases: counter("lootd_lock_releases_total",
			"Settle lock releases by result: released, expired (the key no longer held this settle's token: its ttl ended), error.", "result"),
		deliveries: counter("lootd_deliveries_total",
			"Inventory deliveries by path (settle: the settler's own; compensation: a retry of a PENDING grant under its lease) and result (ok, error).",
			"path", "result"),
		recovers: counter("lootd_recover_runs_total",
			"Compensation passes (Recover) by result: ok, error (something is left for the next pass).", "result"),
	}
	// The series a dashboard divides by exist from the start, at 0.
	for _, trigger := range []string{"api", "deadline"} {
		m.settles.WithLabelValues(trigger, "settled")
		m.settleSeconds.WithLabelValues(trigger)
	}
	m.claims.WithLabelValues("accepted")
	degraded := prometheus.NewGauge(prometheus.GaugeOpts{Name: "lootd_lock_degraded",
		Help: "1 while the settle lock fails (from a failed lock call until one that began after it succeeds; also /readyz's \"lock\"), else 0. Settles go on through the store's CAS meanwhile."})
	m.lock = &lockState{gauge: degraded, log: log}
	for _, path := range []string{"settle", "compensation"} {
		m.deliveries.WithLabelValues(path, "ok")
		m.deliveries.WithLabelValues(path, "error")
	}
	m.http = newHTTPMetrics()
	m.reg.MustRegister(m.settles, m.settleSeconds, m.claims, m.locks, m.releases, degraded, m.deliveries, m.recovers,
		m.http.requests, m.http.seconds,
		pendingCollector{count: pending, log: log},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// pendingCollector reads the PENDING backlog from the store at each
// scrape: the store is shared, so every instance reports the same,
// cluster-wide number. A failed read leaves the series out of that
// scrape (and logs why) rather than report a stale or zero backlog.
type pendingCollector struct {
	count func(context.Context) (int, error)
	log   *slog.Logger
}

var pendingDesc = prometheus.NewDesc("lootd_grants_pending",
	"Grants recorded and not yet confirmed delivered (PENDING), read from the store at scrape time: the compensation backlog of the whole cluster.", nil, nil)

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), pendingTimeout)
	defer cancel()
	n, err := c.count(ctx)
	if err != nil {
		c.log.Warn("metrics: counting PENDING grants", "err", err)
		ch <- prometheus.NewInvalidMetric(pendingDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n))
}

// countedLock counts the Service's lock calls and keeps m.lock's state.
type countedLock struct {
	loot.Lock
	m *metrics
}

func (l countedLock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	began := l.m.lock.begin()
	ok, err := l.Lock.Acquire(ctx, key, token, ttl)
	l.record(ctx, began, "acquire", ok, err, l.m.locks, "acquired", "contended")
	return ok, err
}

func (l countedLock) Release(ctx context.Context, key, token string) (bool, error) {
	began := l.m.lock.begin()
	ok, err := l.Lock.Release(ctx, key, token)
	l.record(ctx, began, "release", ok, err, l.m.releases, "released", "expired")
	return ok, err
}

// record notes the outcome of a call that began at began in the lock's
// state, and counts it in c as error, yes (ok) or no.
func (l countedLock) record(ctx context.Context, began uint64, call string, ok bool, err error, c *prometheus.CounterVec, yes, no string) {
	l.m.lock.end(ctx, began, call, err)
	result := no
	switch {
	case err != nil:
		result = "error"
	case ok:
		result = yes
	}
	c.WithLabelValues(result).Inc()
}

// countedInventory counts deliveries and logs failed ones with the grant
// number. A grant with Attempts > 0 comes from a compensation lease
// (LeaseGrants counts them); the settler's own delivery has 0.
type countedInventory struct {
	loot.Inventory
	m   *metrics
	log *slog.Logger
}

func (inv countedInventory) Deliver(ctx context.Context, g loot.Grant) error {
	path := "settle"
	if g.Attempts > 0 {
		path = "compensation"
	}
	err := inv.Inventory.Deliver(ctx, g)
	if err != nil {
		inv.m.deliveries.WithLabelValues(path, "error").Inc()
		inv.log.Warn("delivery failed; compensation retries it", "grant", g.No, "session", g.Session, "player", g.Player, "attempts", g.Attempts, "err", err)
		return err
	}
	inv.m.deliveries.WithLabelValues(path, "ok").Inc()
	if g.Attempts > 0 {
		inv.log.Info("grant delivered by compensation", "grant", g.No, "session", g.Session, "player", g.Player, "attempts", g.Attempts)
	}
	return nil
}
