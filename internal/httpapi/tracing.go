package httpapi

import (
	"context"
	"net"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/tracing"
)

// The request's span. The generated server's own OpenTelemetry is turned off
// (api/ogen.yml: it costs allocations even with a no-op provider); this layer makes
// the one span of an API request instead, and only when Config.Tracer is set, so that
// tracing off adds nothing to a request.

// startSpan starts the server span of an API request under the caller's trace, when
// its traceparent header names one. Its name is the method until v1 finds the
// operation (nameSpan).
func (s *Server) startSpan(ctx context.Context, r *http.Request, ri *requestInfo) (context.Context, trace.Span) {
	// Header.Get of the lower-case names the propagator asks for allocates their
	// canonical form: without the header, which most requests lack, there is no call.
	if len(r.Header["Traceparent"]) > 0 {
		ctx = tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	ctx, span := s.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer))
	if span.IsRecording() {
		client, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			client = r.RemoteAddr
		}
		span.SetAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
			attribute.String("client.address", client),
			attribute.String("user_agent.original", r.UserAgent()),
			attribute.String("petstore.request_id", ri.id),
		)
	}
	return ctx, span
}

// nameSpan names the request's span after the operation v1 found. (The span is not
// kept in requestInfo: a larger requestInfo costs every request, traced or not.)
func nameSpan(span trace.Span, ri *requestInfo) {
	if op := ri.operation(); op != "" {
		span.SetName(op)
		if span.IsRecording() {
			span.SetAttributes(attribute.String("http.route", apiPrefix+ri.route.PathPattern()))
		}
	}
}

// endSpan ends the request's span with its answer.
func endSpan(span trace.Span, ri *requestInfo, status int) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if ri.principal.AccountID != 0 {
			span.SetAttributes(attribute.Int64("petstore.account_id", ri.principal.AccountID))
		}
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	span.End()
}
