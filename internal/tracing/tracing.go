// Package tracing is the service's OpenTelemetry: a tracer provider made from the
// standard OTEL_* environment variables (off when they name no endpoint), spans
// around the hot store calls (Store), the trace ids in log lines (LogHandler), and
// the W3C traceparent that events keep for their webhook deliveries.
//
// Off costs nothing: the command passes no provider (nil) anywhere, and every layer
// then skips its tracing entirely, rather than calling a no-op tracer that would
// still allocate a context per request.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of the service's spans.
const Name = "github.com/acme-pets/petstore"

// Propagator reads and writes the W3C traceparent header (and tracestate): the one
// format of incoming requests and outgoing webhooks.
var Propagator = propagation.TraceContext{}

// Provider is a tracer provider that exports what it records, and flushes on Shutdown.
type Provider struct {
	*sdktrace.TracerProvider
	// Endpoint is where spans go, for the start-up log line.
	Endpoint string
}

// FromEnv makes the provider the OTEL_* variables ask for, read with getenv, or nil
// when tracing is off: OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none, or neither
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT set. Spans go by
// OTLP over HTTP (protobuf). The SDK itself reads the rest from the process's
// environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and
// _ARG, OTEL_BSP_*, OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION…); service.name
// is "petstore" unless they say otherwise.
func FromEnv(ctx context.Context, getenv func(string) string, version string) (*Provider, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return nil, nil
	case "", "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: want otlp or none", exp)
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		return nil, nil
	}
	switch p := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p {
	case "", "http/protobuf":
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=%q: only http/protobuf is supported", p)
	}
	if p := getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" && getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") == "" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: only http/protobuf is supported", p)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// Later options win: the variables override the defaults named first.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("petstore"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{TracerProvider: tp, Endpoint: endpoint}, nil
}

// TraceParent is the W3C traceparent of the span in ctx, or "" when ctx has none. A
// stored event keeps it, so that its webhook deliveries join the request's trace.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	// 00-<trace id>-<span id>-<flags>, as propagation.TraceContext writes it.
	tid, sid := sc.TraceID(), sc.SpanID()
	var b [55]byte
	buf := append(b[:0], "00-"...)
	buf = appendHex(buf, tid[:])
	buf = append(buf, '-')
	buf = appendHex(buf, sid[:])
	buf = append(buf, '-')
	buf = appendHex(buf, []byte{byte(sc.TraceFlags())})
	return string(buf)
}

func appendHex(dst, src []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range src {
		dst = append(dst, digits[c>>4], digits[c&0x0f])
	}
	return dst
}

// WithTraceParent returns ctx with the remote span that traceparent names as its
// parent span, or ctx itself when traceparent is empty or not one.
func WithTraceParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
