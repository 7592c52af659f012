package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
	"github.com/acme-pets/petstore/internal/tracing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestFromEnv(t *testing.T) {
	const endpoint = "http://127.0.0.1:4318"
	tests := []struct {
		name    string
		vars    map[string]string
		on      bool
		wantErr string
	}{
		{"no endpoint is off", map[string]string{}, false, ""},
		{"an endpoint is on", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}, true, ""},
		{"a traces endpoint is on", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces"}, true, ""},
		{"the SDK disabled is off", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SDK_DISABLED": "true"}, false, ""},
		{"the exporter none is off", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": "none"}, false, ""},
		{"another exporter is refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{"gRPC is refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "http/protobuf"},
		{"gRPC for traces is refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, false, "http/protobuf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := tracing.FromEnv(context.Background(), env(tt.vars), "v1.0.0")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tp != nil) != tt.on {
				t.Fatalf("provider = %v, want on: %v", tp, tt.on)
			}
			if tp != nil {
				_ = tp.Shutdown(context.Background())
			}
		})
	}
}

func TestATraceParentReadsBackAsTheSpanItNames(t *testing.T) {
	if got := tracing.TraceParent(context.Background()); got != "" {
		t.Errorf("TraceParent of no span = %q, want empty", got)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	tp := tracing.TraceParent(trace.ContextWithSpanContext(context.Background(), sc))
	if want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; tp != want {
		t.Fatalf("TraceParent = %q, want %q", tp, want)
	}
	back := trace.SpanContextFromContext(tracing.WithTraceParent(context.Background(), tp))
	if !back.IsRemote() || back.TraceID() != sc.TraceID() || back.SpanID() != sc.SpanID() || !back.IsSampled() {
		t.Errorf("tracing.WithTraceParent(%q) holds %v, want the remote span %v", tp, back, sc)
	}
	for _, bad := range []string{"", "00-nothex-00f067aa0ba902b7-01", "garbage"} {
		if sc := trace.SpanContextFromContext(tracing.WithTraceParent(context.Background(), bad)); sc.IsValid() {
			t.Errorf("tracing.WithTraceParent(%q) holds a span", bad)
		}
	}
}

func TestALogLineCarriesTheIdsOfASampledSpanOnly(t *testing.T) {
	tests := []struct {
		name    string
		flags   trace.TraceFlags
		wantIDs bool
	}{
		{"sampled", trace.FlagsSampled, true},
		{"not sampled", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(tracing.LogHandler{Handler: slog.NewJSONHandler(&buf, nil)}).With("component", "test")
			sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: tt.flags})
			log.InfoContext(trace.ContextWithSpanContext(context.Background(), sc), "hello")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			_, has := line["trace_id"]
			if has != tt.wantIDs {
				t.Fatalf("line %s: has trace_id %v, want %v", buf.Bytes(), has, tt.wantIDs)
			}
			if tt.wantIDs && (line["trace_id"] != sc.TraceID().String() || line["span_id"] != sc.SpanID().String() || line["component"] != "test") {
				t.Errorf("line %s: want trace_id %s, span_id %s and the logger's attributes", buf.Bytes(), sc.TraceID(), sc.SpanID())
			}
		})
	}
}

// TestTheHotStoreCallsAreSpansOfTheirCaller runs calls through Store on a real
// SQLite store: the hot ones are spans under the caller's span, a refusal is told by
// its code without failing the span, and the others pass through untraced.
func TestTheHotStoreCallsAreSpansOfTheirCaller(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	st := tracing.Store(db, tp, "sqlite")
	ctx, parent := tp.Tracer("test").Start(ctx, "request")
	c, err := st.CreateCategory(ctx, petstore.Category{Name: "Dogs"}) // not a hot call
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pet(ctx, p.ID+1000); petstore.ErrorCode(err) != petstore.ENotFound {
		t.Fatalf("Pet of no pet: %v", err)
	}
	parent.End()

	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
		if s.Name() == "request" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the caller's span", s.Name())
		}
		attrs := map[string]string{}
		for _, a := range s.Attributes() {
			attrs[string(a.Key)] = a.Value.String()
		}
		if attrs["db.system.name"] != "sqlite" {
			t.Errorf("%s has db.system.name %q", s.Name(), attrs["db.system.name"])
		}
		if s.Name() == "store.Pet" && (attrs["petstore.error_code"] != petstore.ENotFound || s.Status().Code != 0) {
			t.Errorf("store.Pet of no pet: error code %q, status %v; want not_found, unset", attrs["petstore.error_code"], s.Status())
		}
	}
	if want := "store.CreatePet store.Pet request"; strings.Join(names, " ") != want {
		t.Errorf("spans %v, want %s", names, want)
	}
}

// TestAStoreCallUnderAnUnsampledSpanMakesNone: a store span under a request that is
// not recorded would never be exported, so none is made.
func TestAStoreCallUnderAnUnsampledSpanMakesNone(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.NeverSample()))
	ctx, parent := tp.Tracer("test").Start(ctx, "request")
	if _, err := tracing.Store(db, tp, "sqlite").Pet(ctx, 1); petstore.ErrorCode(err) != petstore.ENotFound {
		t.Fatalf("Pet of no pet: %v", err)
	}
	parent.End()
	if n := len(rec.Started()); n != 0 {
		t.Errorf("%d spans were started under an unsampled request, want none", n)
	}
}
