package main

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the per-route series: requests by listener, route,
// method and status code, and their latency by listener, route and
// method. route is the route's pattern (/api/loot/sessions/{sessionNo}),
// never the raw path, and method one of the methods HTTP defines or OTHER,
// so the number of series is bounded by the route table, whatever clients
// send.
type httpMetrics struct {
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
}

func newHTTPMetrics() httpMetrics {
	return httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lootd_http_requests_total",
			Help: "HTTP requests by listener (player, internal), route (the route's pattern; unmatched for no route), method and status code.",
		}, []string{"listener", "route", "method", "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lootd_http_request_duration_seconds",
			Help: "Time from a request's routing to its handler's return, by listener, route and method.",
			// 0.25 ms (an in-memory claim answers in tens of microseconds;
			// one round trip to a database on the same host is ~0.1-0.5 ms)
			// doubling to 8.2 s (past the 5 s budget of an operation, so a
			// request cut by its budget lands below the +Inf bucket): 16
			// buckets.
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16),
		}, []string{"listener", "route", "method"}),
	}
}

// instrument counts and times h's requests under listener, route and
// method (method "" for a handler of any method: the request's, as
// methodLabel bounds it).
func (m *metrics) instrument(listener, method, route string, h http.HandlerFunc) http.Handler {
	// A route of one method resolves its latency series and its 200s'
	// counter once, at its first 200, instead of hashing four labels (and
	// formatting the status) per request: most requests are a fixed
	// route's 200. Lazily, so a series appears only once it counts
	// something, as WithLabelValues per request had it.
	ok := sync.OnceValue(func() prometheus.Counter {
		return m.http.requests.WithLabelValues(listener, route, method, "200")
	})
	seconds := sync.OnceValue(func() prometheus.Observer {
		return m.http.seconds.WithLabelValues(listener, route, method)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h(sw, r)
		if method != "" && sw.status == http.StatusOK {
			ok().Inc()
			seconds().Observe(time.Since(began).Seconds())
			return
		}
		mt := method
		if mt == "" {
			mt = methodLabel(r.Method)
		}
		m.http.requests.WithLabelValues(listener, route, mt, strconv.Itoa(sw.status)).Inc()
		m.http.seconds.WithLabelValues(listener, route, mt).Observe(time.Since(began).Seconds())
	})
}

// methodLabel is method if HTTP defines it, else OTHER: a client can send
// any token as a method, and each would be a series.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// statusWriter remembers the status a handler wrote (200 if it wrote a
// body without one, as net/http does). Unwrap lets http.ResponseController
// reach the connection's own writer; decode unwraps it for
// http.MaxBytesReader, whose signal to close the connection after a too
// large body only the server's own writer can take.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
