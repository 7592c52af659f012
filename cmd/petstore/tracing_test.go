package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/acme-pets/petstore/internal/servetest"
)

// collector is an OTLP/HTTP trace receiver: it decodes what the exporter posts to
// /v1/traces, the real protobuf, and keeps the spans with their service's name.
type collector struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	// services are the service.name of the resources the spans came with.
	services map[string]bool
}

func newCollector(t *testing.T) *collector {
	c := &collector{services: map[string]bool{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("the exporter sent %s %s (%s), want POST /v1/traces as protobuf", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		raw, err := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &req)
		}
		if err != nil {
			t.Errorf("an export is no ExportTraceServiceRequest: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					c.services[a.GetValue().GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// span returns the first span named name in trace traceID that match says is the
// one, or nil.
func (c *collector) span(name string, traceID []byte, match func(*tracepb.Span) bool) *tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if s.Name == name && bytes.Equal(s.TraceId, traceID) && (match == nil || match(s)) {
			return s
		}
	}
	return nil
}

// waitSpan polls for c.span until within is over, then fails the test.
func (c *collector) waitSpan(t *testing.T, within time.Duration, what, name string, traceID []byte, match func(*tracepb.Span) bool) *tracepb.Span {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if s := c.span(name, traceID, match); s != nil {
			return s
		}
		if time.Now().After(deadline) {
			c.mu.Lock()
			var got []string
			for _, s := range c.spans {
				got = append(got, fmt.Sprintf("%s trace=%x parent=%x", s.Name, s.TraceId, s.ParentSpanId))
			}
			c.mu.Unlock()
			t.Fatalf("no %s (span %q in trace %x) was exported within %v; got %v", what, name, traceID, within, got)
		}
	}
}

// tracedOrder places an order for pet as a request of the caller's trace: its
// traceparent names the trace and the caller's span.
func tracedOrder(t *testing.T, api adminClient, pet int64) (traceID, parent []byte) {
	t.Helper()
	traceID, parent = make([]byte, 16), make([]byte, 8)
	rand.Read(traceID)
	rand.Read(parent)
	req, _ := http.NewRequest("POST", api.base+"/store/orders", strings.NewReader(fmt.Sprintf(`{"petId":%d,"quantity":1}`, pet)))
	req.Header.Set("Authorization", "Bearer "+api.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", fmt.Sprintf("00-%x-%x-01", traceID, parent))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("place the order: %d, want 201", res.StatusCode)
	}
	return traceID, parent
}

// requestLine waits for the JSON log line of the request of operation op and returns
// it, or fails the test.
func requestLine(t *testing.T, logs *syncBuffer, op string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "request" && line["operation"] == op {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request line of %s in the log:\n%s", op, logs.String())
		}
	}
}

// startTraced runs the binary on a new SQLite database with env added, logging JSON
// to logs, and returns an admin's client of it.
func startTraced(t *testing.T, env []string, logs *syncBuffer) adminClient {
	t.Helper()
	bin := buildPetstore(t)
	dsn := filepath.Join(t.TempDir(), "p.db")
	key := adminKey(t, bin, dsn)
	addr := freeAddr(t)
	p, err := servetest.ServeEnv(bin, env, logs, 30*time.Second, "--addr", addr, "--admin-addr", "off", "--database", dsn,
		"--no-bootstrap", "--rate-limit", "0", "--webhooks-allow-private", "--log-format", "json")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return adminClient{t: t, base: "http://" + addr + "/v1", key: key}
}

// TestAnOrderIsOneTraceFromTheCallerToTheWebhookReceiver runs the binary with an
// OTLP endpoint, places an order with a traceparent, and reads the spans the
// collector got: the request's span is named placeOrder under the caller's span, the
// store call is its child, the group-commit batch links to that call, the webhook
// attempt is in the same trace, the receiver got a traceparent of that trace, and
// the request's log line names the trace and the request's span.
func TestAnOrderIsOneTraceFromTheCallerToTheWebhookReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	col := newCollector(t)
	var logs syncBuffer
	api := startTraced(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.srv.URL, "OTEL_BSP_SCHEDULE_DELAY=20",
		"OTEL_SERVICE_NAME=petstore-under-test", "OTEL_TRACES_SAMPLER=parentbased_always_on", "OTEL_SDK_DISABLED=",
		"OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="}, &logs)
	r := newReceiver(t)
	api.subscribe(r)
	pet := api.pet(10)
	traceID, parent := tracedOrder(t, api, pet)

	const within = 30 * time.Second
	req := col.waitSpan(t, within, "request span under the caller's", "placeOrder", traceID, func(s *tracepb.Span) bool {
		return bytes.Equal(s.ParentSpanId, parent)
	})
	if req.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("the request span is of kind %v, want server", req.Kind)
	}
	if got := attr(req, "http.response.status_code"); got != "201" {
		t.Errorf("the request span's http.response.status_code is %q, want 201", got)
	}
	if got := attr(req, "http.route"); got != "/v1/store/orders" {
		t.Errorf("the request span's http.route is %q, want /v1/store/orders", got)
	}
	store := col.waitSpan(t, within, "store span under the request's", "store.PlaceOrder", traceID, func(s *tracepb.Span) bool {
		return bytes.Equal(s.ParentSpanId, req.SpanId)
	})
	col.waitSpan(t, within, "group-commit span linked to the store call", "groupcommit.batch", traceID, func(s *tracepb.Span) bool {
		for _, l := range s.Links {
			if bytes.Equal(l.TraceId, traceID) && bytes.Equal(l.SpanId, store.SpanId) {
				return true
			}
		}
		return false
	})
	col.waitSpan(t, within, "webhook attempt span in the order's trace", "webhook.attempt", traceID, nil)
	col.mu.Lock()
	if !col.services["petstore-under-test"] {
		t.Errorf("the spans came from services %v, want OTEL_SERVICE_NAME's petstore-under-test", col.services)
	}
	col.mu.Unlock()

	got := r.waitFor("order.placed", 1, within)
	if tp := got[0].traceparent; !strings.HasPrefix(tp, fmt.Sprintf("00-%x-", traceID)) {
		t.Errorf("the delivery came with traceparent %q, want one of trace %x", tp, traceID)
	}
	line := requestLine(t, &logs, "placeOrder")
	if line["trace_id"] != hex.EncodeToString(traceID) || line["span_id"] != hex.EncodeToString(req.SpanId) {
		t.Errorf("the request's log line has trace_id %v span_id %v, want %x %x", line["trace_id"], line["span_id"], traceID, req.SpanId)
	}
}

// TestWithoutAnEndpointNothingIsTraced runs the binary with no OTLP endpoint: an
// incoming traceparent goes nowhere, neither into the log nor to the receiver.
func TestWithoutAnEndpointNothingIsTraced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	var logs syncBuffer
	api := startTraced(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="}, &logs)
	r := newReceiver(t)
	api.subscribe(r)
	tracedOrder(t, api, api.pet(10))
	got := r.waitFor("order.placed", 1, 30*time.Second)
	if got[0].traceparent != "" {
		t.Errorf("with tracing off, a delivery came with traceparent %q", got[0].traceparent)
	}
	if line := requestLine(t, &logs, "placeOrder"); line["trace_id"] != nil {
		t.Errorf("with tracing off, the request's log line has trace_id %v", line["trace_id"])
	}
}

// attr is the value of a span's attribute key as text ("" when it has none).
func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			switch v := a.Value.Value.(type) {
			case *commonpb.AnyValue_StringValue:
				return v.StringValue
			case *commonpb.AnyValue_IntValue:
				return fmt.Sprint(v.IntValue)
			}
		}
	}
	return ""
}
