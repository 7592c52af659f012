package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Store wraps st so that its hot calls, the reads and writes of pets, stock and
// orders, are spans of their own ("store.PlaceOrder"), children of the request's
// when that is recorded (sampled); under an unrecorded span the calls pass through.
// The other calls (accounts, keys, webhooks, the admin's rarer reads) pass through
// untraced: the embedded Store answers them. system names the database
// ("sqlite", "postgresql") in the spans' db.system.name.
//
// The command wraps its store only while tracing is on; the wrapper is no type the
// command switches on (poolStats reads the store it opened).
func Store(st petstore.Store, tp trace.TracerProvider, system string) petstore.Store {
	return &tracedStore{Store: st, tracer: tp.Tracer(Name), system: attribute.String("db.system.name", system)}
}

type tracedStore struct {
	petstore.Store
	tracer trace.Tracer
	system attribute.KeyValue
}

// start begins a store span under ctx's.
func (s *tracedStore) start(ctx context.Context, name string) (context.Context, trace.Span) {
	return s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(s.system))
}

// end ends span with err: a domain refusal (not found, out of stock…) is the
// caller's answer, not a failure of the store, so only other errors mark it failed.
func end(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		code := petstore.ErrorCode(err)
		span.SetAttributes(attribute.String("petstore.error_code", code))
		if code == petstore.EInternal {
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// traced runs call in a span named name, when the caller's span is recorded: under
// an unsampled request (most of them, at a ratio below 1) a store span would never be
// exported either, and costs the call a span, a context and a closure for nothing.
func traced[T any](s *tracedStore, ctx context.Context, name string, call func(context.Context) (T, error)) (T, error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return call(ctx)
	}
	ctx, span := s.start(ctx, name)
	v, err := call(ctx)
	end(span, err)
	return v, err
}

func (s *tracedStore) Pet(ctx context.Context, id int64) (petstore.Pet, error) {
	return traced(s, ctx, "store.Pet", func(ctx context.Context) (petstore.Pet, error) { return s.Store.Pet(ctx, id) })
}

func (s *tracedStore) Pets(ctx context.Context, f petstore.PetFilter, p petstore.Page) ([]petstore.Pet, error) {
	return traced(s, ctx, "store.Pets", func(ctx context.Context) ([]petstore.Pet, error) { return s.Store.Pets(ctx, f, p) })
}

func (s *tracedStore) CreatePet(ctx context.Context, f petstore.PetFields) (petstore.Pet, error) {
	return traced(s, ctx, "store.CreatePet", func(ctx context.Context) (petstore.Pet, error) { return s.Store.CreatePet(ctx, f) })
}

func (s *tracedStore) UpdatePet(ctx context.Context, id int64, change func(petstore.PetFields) (petstore.PetFields, error)) (petstore.Pet, error) {
	return traced(s, ctx, "store.UpdatePet", func(ctx context.Context) (petstore.Pet, error) { return s.Store.UpdatePet(ctx, id, change) })
}

func (s *tracedStore) Inventory(ctx context.Context, petID int64) (petstore.InventoryItem, error) {
	return traced(s, ctx, "store.Inventory", func(ctx context.Context) (petstore.InventoryItem, error) { return s.Store.Inventory(ctx, petID) })
}

func (s *tracedStore) SetInventory(ctx context.Context, petID int64, quantity int) (petstore.InventoryItem, error) {
	return traced(s, ctx, "store.SetInventory", func(ctx context.Context) (petstore.InventoryItem, error) {
		return s.Store.SetInventory(ctx, petID, quantity)
	})
}

func (s *tracedStore) PlaceOrder(ctx context.Context, o petstore.NewOrder) (petstore.PlacedOrder, error) {
	return traced(s, ctx, "store.PlaceOrder", func(ctx context.Context) (petstore.PlacedOrder, error) { return s.Store.PlaceOrder(ctx, o) })
}

func (s *tracedStore) Order(ctx context.Context, id, owner int64) (petstore.Order, error) {
	return traced(s, ctx, "store.Order", func(ctx context.Context) (petstore.Order, error) { return s.Store.Order(ctx, id, owner) })
}

func (s *tracedStore) Orders(ctx context.Context, f petstore.OrderFilter, p petstore.Page) ([]petstore.Order, error) {
	return traced(s, ctx, "store.Orders", func(ctx context.Context) ([]petstore.Order, error) { return s.Store.Orders(ctx, f, p) })
}

func (s *tracedStore) CancelOrder(ctx context.Context, id, owner int64) error {
	_, err := traced(s, ctx, "store.CancelOrder", func(ctx context.Context) (struct{}, error) { return struct{}{}, s.Store.CancelOrder(ctx, id, owner) })
	return err
}

func (s *tracedStore) UpdateOrder(ctx context.Context, id int64, u petstore.OrderUpdate) (petstore.Order, error) {
	return traced(s, ctx, "store.UpdateOrder", func(ctx context.Context) (petstore.Order, error) { return s.Store.UpdateOrder(ctx, id, u) })
}
