package httpapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/acme-pets/petstore/api"
)

// PoolStats describes one database connection pool for the metrics.
type PoolStats struct {
	Pool         string
	MaxOpen      int
	InUse, Idle  int
	WaitCount    int64
	WaitDuration time.Duration
}

// metrics are the service's Prometheus metrics. Every label value comes from a fixed
// set (operation ids of the document, HTTP statuses, error codes), never from a raw
// path or other user input.
type metrics struct {
	registry      *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      map[string]prometheus.Observer
	inFlight      prometheus.Gauge
	ordersPlaced  prometheus.Counter
	ordersRefused *prometheus.CounterVec
	rateLimited   prometheus.Counter
}

// noOperation labels /v1 requests that match no operation (404, 405).
const noOperation = "none"

func newMetrics(ops []api.Operation, pools func() []PoolStats) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_http_requests_total",
			Help: "API requests by operation id and HTTP status.",
		}, []string{"operation", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "petstore_http_requests_in_flight",
			Help: "API requests being served.",
		}),
		ordersPlaced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_orders_placed_total",
			Help: "Orders placed (idempotent replays not counted).",
		}),
		ordersRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_orders_refused_total",
			Help: "Orders refused, by error code; insufficient_stock counts every stock-out, whatever the code answered.",
		}, []string{"reason"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_rate_limited_total",
			Help: "API requests refused with 429.",
		}),
	}
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "petstore_http_request_duration_seconds",
		Help:    "API request latency by operation id.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"operation"})
	// Observers per operation are looked up once, so the hot path does no label
	// hashing for latency.
	m.duration = map[string]prometheus.Observer{noOperation: duration.WithLabelValues(noOperation)}
	for _, op := range ops {
		m.duration[op.ID] = duration.WithLabelValues(op.ID)
	}
	reg.MustRegister(m.requests, duration, m.inFlight, m.ordersPlaced, m.ordersRefused, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pools != nil {
		reg.MustRegister(poolCollector(pools))
	}
	return m
}

// statusText holds the label value of every HTTP status, so that labelling allocates
// nothing.
var statusText = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func (m *metrics) observe(operation string, status int, elapsed time.Duration) {
	if operation == "" {
		operation = noOperation
	}
	if status < 0 || status >= len(statusText) {
		status = 0
	}
	m.requests.WithLabelValues(operation, statusText[status]).Inc()
	if o, ok := m.duration[operation]; ok {
		o.Observe(elapsed.Seconds())
	}
}

type poolCollector func() []PoolStats

var (
	poolMaxDesc   = prometheus.NewDesc("petstore_db_connections_max", "Most connections the pool opens.", []string{"pool"}, nil)
	poolConnsDesc = prometheus.NewDesc("petstore_db_connections", "Connections by state.", []string{"pool", "state"}, nil)
	poolWaitDesc  = prometheus.NewDesc("petstore_db_wait_total", "Times a caller waited for a connection.", []string{"pool"}, nil)
	poolWaitSecs  = prometheus.NewDesc("petstore_db_wait_seconds_total", "Time spent waiting for a connection.", []string{"pool"}, nil)
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolMaxDesc
	ch <- poolConnsDesc
	ch <- poolWaitDesc
	ch <- poolWaitSecs
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c() {
		ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(p.MaxOpen), p.Pool)
		ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(p.InUse), p.Pool, "in_use")
		ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(p.Idle), p.Pool, "idle")
		ch <- prometheus.MustNewConstMetric(poolWaitDesc, prometheus.CounterValue, float64(p.WaitCount), p.Pool)
		ch <- prometheus.MustNewConstMetric(poolWaitSecs, prometheus.CounterValue, p.WaitDuration.Seconds(), p.Pool)
	}
}
