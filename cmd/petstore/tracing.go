package main

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/acme-pets/petstore/internal/tracing"
)

// startTracing makes the tracer provider the OTEL_* variables ask for (nil when they
// leave tracing off) and returns the logger to use: log, whose lines then carry the
// trace and span ids of a sampled request. stop flushes the spans not yet exported.
func startTracing(ctx context.Context, getenv func(string) string, log *slog.Logger) (tp *tracing.Provider, logger *slog.Logger, stop func(), err error) {
	tp, err = tracing.FromEnv(ctx, getenv, buildVersion(releaseStamp()))
	if err != nil || tp == nil {
		return nil, log, func() {}, err
	}
	// The SDK reports failed exports only through its process-wide handler: to the
	// service's log, not to the standard logger's stderr lines.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing", "err", err)
	}))
	log = slog.New(tracing.LogHandler{Handler: log.Handler()})
	log.Info("tracing on: spans go to an OTLP/HTTP collector", "endpoint", tp.Endpoint)
	stop = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("tracing: flush the last spans", "err", err)
		}
	}
	return tp, log, stop, nil
}
