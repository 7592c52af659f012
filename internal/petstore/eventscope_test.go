package petstore

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/acme-pets/petstore/api"
)

// readsDirectly is the schema of each type's data that an operation answers directly,
// as the document's Event.data says. An api_key.* event's key is shown by no call of
// another account (GET /api-keys shows the caller's own); its account's email is what
// GET /accounts shows, so the Account is what it is read as.
var readsDirectly = map[EventType]string{
	OrderPlaced: "Order", OrderCompleted: "Order", OrderCancelled: "Order",
	PetSoldOut: "InventoryItem", PetRestocked: "InventoryItem", InventoryUpdated: "InventoryItem",
	PetStatusChanged: "Pet", WebhookTest: "Webhook",
	APIKeyCreated: "Account", APIKeyRevoked: "Account",
}

// Every event type names the scope that reads its data directly: a scope of the
// document's catalogue, the x-scopes of a GET operation that answers the same
// resource, and the one the document's EventType schema lists (x-read-scopes).
func TestEveryEventTypeNamesTheScopeThatReadsIt(t *testing.T) {
	root, err := api.ParseTree(api.Source)
	if err != nil {
		t.Fatal(err)
	}
	catalogue, err := api.Scopes()
	if err != nil {
		t.Fatal(err)
	}
	readers := getScopesBySchema(root)
	all := append(slices.Clone(EventTypes), WebhookTest)
	for _, typ := range all {
		scope := typ.Scope()
		if !slices.ContainsFunc(catalogue, func(s api.Scope) bool { return s.Name == scope }) {
			t.Errorf("%s needs scope %q, which the catalogue does not list", typ, scope)
		}
		schema, ok := readsDirectly[typ]
		if !ok {
			t.Errorf("%s: which resource does its data show? add it to readsDirectly", typ)
			continue
		}
		if !slices.Contains(readers[schema], scope) {
			t.Errorf("%s needs %s, but the GET operations that answer a %s need %v", typ, scope, schema, readers[schema])
		}
	}
	schema := api.Value(api.Value(api.Value(root.Content[0], "components"), "schemas"), "EventType")
	listed := map[EventType]string{}
	if m := api.Value(schema, "x-read-scopes"); m != nil {
		for i := 0; i+1 < len(m.Content); i += 2 {
			listed[EventType(m.Content[i].Value)] = m.Content[i+1].Value
		}
	}
	if len(listed) != len(all) {
		t.Errorf("the document's EventType lists %d types in x-read-scopes, the domain %d", len(listed), len(all))
	}
	for _, typ := range all {
		if listed[typ] != typ.Scope() {
			t.Errorf("the document says %s needs %q, the domain %q", typ, listed[typ], typ.Scope())
		}
	}
	var enum []EventType
	for _, n := range api.Value(schema, "x-extensible-enum").Content {
		enum = append(enum, EventType(n.Value))
	}
	if !slices.Equal(slices.Sorted(slices.Values(enum)), slices.Sorted(slices.Values(all))) {
		t.Errorf("the document's event types %v are not the domain's %v", enum, all)
	}
}

// getScopesBySchema maps each schema that a GET operation answers (itself, or a list
// of it) to the x-scopes of those operations.
func getScopesBySchema(root *yaml.Node) map[string][]string {
	out := map[string][]string{}
	api.WalkOperations(root, func(_, method string, op *yaml.Node) {
		if method != "get" {
			return
		}
		schema := api.Value(api.Value(api.Value(api.Value(api.Value(op, "responses"), "200"), "content"), "application/json"), "schema")
		if items := api.Value(schema, "items"); items != nil {
			schema = items
		}
		name := strings.TrimPrefix(api.Scalar(schema, "$ref"), "#/components/schemas/")
		scopes := api.Value(op, "x-scopes")
		if scopes == nil { // an operation open to all (getPhoto) needs no scope
			return
		}
		for _, s := range scopes.Content {
			if name != "" && !slices.Contains(out[name], s.Value) {
				out[name] = append(out[name], s.Value)
			}
		}
	})
	return out
}

func TestWhichEventsAKeyMayRead(t *testing.T) {
	unlimited := Principal{Role: Admin}
	orders := Principal{Role: Admin, Scopes: []string{"events:read", "orders:read", "webhooks:manage"}}
	catalogue := Principal{Role: Admin, Scopes: []string{"events:read", "pets:read"}}
	everyRead := Principal{Role: Admin, Scopes: []string{"accounts:read", "events:read", "orders:read", "pets:read"}}
	feedOnly := Principal{Role: Admin, Scopes: []string{"events:read"}}
	orderTypes := []EventType{OrderPlaced, OrderCompleted, OrderCancelled}
	tests := []struct {
		name     string
		p        Principal
		readable EventMask
		feed     EventFilter
		// missing is what MissingEventScope says of MaskAll ("*").
		missing string
	}{
		{"a key with every scope of its role reads every type, later ones too", unlimited, MaskAll, EventFilter{}, ""},
		{"a key with orders:read reads the order events", orders, OrderPlaced.Bit() | OrderCompleted.Bit() | OrderCancelled.Bit(),
			EventFilter{Types: orderTypes}, "pets:read"},
		{"a key with pets:read reads the pet and stock events", catalogue,
			PetSoldOut.Bit() | PetRestocked.Bit() | PetStatusChanged.Bit() | InventoryUpdated.Bit(),
			EventFilter{Types: []EventType{PetSoldOut, PetRestocked, PetStatusChanged, InventoryUpdated}}, "orders:read"},
		{"a limited key with every read scope reads today's types, by name", everyRead, 1<<len(EventTypes) - 1,
			EventFilter{Types: EventTypes}, ""},
		{"a key with events:read alone reads nothing", feedOnly, 0, EventFilter{Types: []EventType{}}, "orders:read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.ReadableEvents(); got != tt.readable {
				t.Errorf("ReadableEvents = %b, want %b", got, tt.readable)
			}
			f, err := tt.p.FeedFilter("")
			if err != nil || f.Type != "" || !slices.Equal(f.Types, tt.feed.Types) || (f.Types == nil) != (tt.feed.Types == nil) {
				t.Errorf("FeedFilter(\"\") = %+v (%v), want %+v", f, err, tt.feed)
			}
			if _, scope := tt.p.MissingEventScope(MaskAll); scope != tt.missing {
				t.Errorf("MissingEventScope(*) = %q, want %q", scope, tt.missing)
			}
			for _, typ := range append(slices.Clone(EventTypes), "order.shipped") {
				may := tt.readable&typ.Bit() != 0 && typ.Bit() != 0
				if tt.p.Scopes == nil {
					may = true
				}
				if got := tt.p.MayReadEvents(typ); got != may {
					t.Errorf("MayReadEvents(%s) = %v, want %v", typ, got, may)
				}
				f, err := tt.p.FeedFilter(typ)
				switch {
				case typ.Bit() == 0: // the document refuses an unknown type before
				case may && (err != nil || f.Type != typ || f.Types != nil):
					t.Errorf("FeedFilter(%s) = %+v, %v; want that type", typ, f, err)
				case !may && !isLacking(err, typ.Scope()):
					t.Errorf("FeedFilter(%s) = %v, want insufficient_scope naming %s", typ, err, typ.Scope())
				}
			}
		})
	}
}

// isLacking reports whether err is the refusal of a key that lacks scope.
func isLacking(err error, scope string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == EInsufficientScope && e.Scope == scope && strings.Contains(e.Message, scope)
}

// A key points an endpoint only at what it may read: its subscription on every
// change of URL or subscription, and the deliveries still pending when the URL
// changes (read only then).
func TestCheckStream(t *testing.T) {
	orders := Principal{Role: Admin, Scopes: []string{"orders:read", "webhooks:manage"}}
	everyRead := Principal{Role: Admin, Scopes: []string{"accounts:read", "orders:read", "pets:read", "webhooks:manage"}}
	ordersOnly := OrderPlaced.Bit() | OrderCancelled.Bit()
	hook := Webhook{ID: 1, URL: "https://a.example.com/h", Events: ordersOnly, Enabled: true}
	with := func(f func(*Webhook)) Webhook { w := hook; f(&w); return w }
	pendingOf := func(types ...EventType) (PendingTypes, *int) {
		n := new(int)
		return func() ([]EventType, error) { *n++; return types, nil }, n
	}
	tests := []struct {
		name     string
		p        Principal
		before   Webhook
		after    Webhook
		pending  []EventType
		lacking  string // the scope refused; "" when allowed, "*" for a limited key's *
		readsPen bool
	}{
		{"a new endpoint of types the key reads", orders, Webhook{}, with(func(w *Webhook) { w.ID = 0 }), nil, "", false},
		{"a new endpoint of a type the key does not read", orders, Webhook{},
			with(func(w *Webhook) { w.ID, w.Events = 0, ordersOnly|APIKeyCreated.Bit() }), nil, "accounts:read", false},
		{"a new endpoint of every type", orders, Webhook{}, with(func(w *Webhook) { w.ID, w.Events = 0, MaskAll }), nil, "pets:read", false},
		{"a new endpoint of every type by name, with every read scope", everyRead, Webhook{},
			with(func(w *Webhook) { w.ID, w.Events = 0, 1<<len(EventTypes)-1 }), nil, "", false},
		{"a new endpoint of *, later types included, with every read scope", everyRead, Webhook{},
			with(func(w *Webhook) { w.ID, w.Events = 0, MaskAll }), nil, "*", false},
		{"a new subscription the key reads", orders, hook, with(func(w *Webhook) { w.Events = OrderPlaced.Bit() }), nil, "", false},
		{"a new subscription to a type the key does not read", orders, hook,
			with(func(w *Webhook) { w.Events = PetSoldOut.Bit() }), nil, "pets:read", false},
		{"a new URL with pending deliveries the key reads", orders, hook,
			with(func(w *Webhook) { w.URL = "https://b.example.com/h" }), []EventType{OrderPlaced, WebhookTest}, "", true},
		{"a new URL with pending deliveries of a type the key does not read", orders, hook,
			with(func(w *Webhook) { w.URL = "https://b.example.com/h" }), []EventType{OrderPlaced, APIKeyRevoked}, "accounts:read", true},
		{"a new URL on an endpoint disabled by the same change", orders, hook,
			with(func(w *Webhook) { w.URL, w.Enabled = "https://b.example.com/h", false }), []EventType{APIKeyRevoked}, "", false},
		{"a new URL on a * endpoint", orders, with(func(w *Webhook) { w.Events = MaskAll }),
			with(func(w *Webhook) { w.Events, w.URL = MaskAll, "https://b.example.com/h" }), nil, "pets:read", false},
		{"a new description on a * endpoint", orders, with(func(w *Webhook) { w.Events = MaskAll }),
			with(func(w *Webhook) { w.Events, w.Description = MaskAll, "desk" }), []EventType{APIKeyRevoked}, "", false},
		{"enabling a * endpoint", orders, with(func(w *Webhook) { w.Events, w.Enabled = MaskAll, false }),
			with(func(w *Webhook) { w.Events = MaskAll }), nil, "", false},
		{"a key with every scope of its role changes anything", Principal{Role: Admin}, hook,
			with(func(w *Webhook) { w.Events, w.URL = MaskAll, "https://b.example.com/h" }), []EventType{APIKeyRevoked}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pending, reads := pendingOf(tt.pending...)
			err := tt.p.CheckStream(tt.before, tt.after, pending)
			switch {
			case tt.lacking == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.lacking == "*":
				if ErrorCode(err) != EInsufficientScope || !strings.Contains(err.Error(), `"*"`) {
					t.Errorf("CheckStream = %v, want the refusal of * to a limited key", err)
				}
			case tt.lacking != "" && !isLacking(err, tt.lacking):
				t.Errorf("CheckStream = %v, want insufficient_scope naming %s", err, tt.lacking)
			}
			if (*reads > 0) != tt.readsPen {
				t.Errorf("pending read %d times, want read: %v", *reads, tt.readsPen)
			}
		})
	}
	t.Run("a failure to read the pending deliveries is returned", func(t *testing.T) {
		boom := errors.New("boom")
		err := orders.CheckStream(hook, with(func(w *Webhook) { w.URL = "https://b.example.com/h" }),
			func() ([]EventType, error) { return nil, boom })
		if !errors.Is(err, boom) {
			t.Errorf("CheckStream = %v, want the store's error", err)
		}
	})
}

// Sending a delivery again sends its event's data: the key needs its type's scope.
func TestCheckResend(t *testing.T) {
	orders := Principal{Role: Admin, Scopes: []string{"orders:read", "webhooks:manage"}}
	for _, tt := range []struct {
		p       Principal
		typ     EventType
		lacking string
	}{
		{orders, OrderPlaced, ""},
		{orders, WebhookTest, ""},
		{orders, APIKeyCreated, "accounts:read"},
		{orders, InventoryUpdated, "pets:read"},
		{Principal{Role: Admin}, APIKeyCreated, ""},
	} {
		err := tt.p.CheckResend(Delivery{ID: 3, EventType: tt.typ})
		if tt.lacking == "" && err != nil || tt.lacking != "" && !isLacking(err, tt.lacking) {
			t.Errorf("%v resends %s: %v, want lacking %q", tt.p.Scopes, tt.typ, err, tt.lacking)
		}
	}
}

// A delivery listed to a key that may not read its type keeps the status of its last
// answer and drops the answer's start, which a receiver may have echoed the event in.
func TestDeliveryWithoutAnswer(t *testing.T) {
	echo := `{"id":"evt_x","type":"api_key.created","data":{"accountEmail":"ada@example.com"}}`
	for _, tt := range []struct {
		status   int
		last     string
		want     string
		describe string
	}{
		{500, AnsweredError(500, echo), "the endpoint answered 500", "a quoted answer"},
		{503, AnsweredError(503, ""), "the endpoint answered 503", "an answer not quoted"},
		{302, "the endpoint answered 302, a redirect, which is not followed", "the endpoint answered 302, a redirect, which is not followed", "a redirect"},
		{0, "the endpoint could not be reached", "the endpoint could not be reached", "no answer"},
		{0, "", "", "a success"},
	} {
		d := Delivery{ID: 1, EventType: APIKeyCreated, ResponseStatus: tt.status, LastError: tt.last}
		if got := d.WithoutAnswer(); got.LastError != tt.want || got.ResponseStatus != tt.status || got.ID != 1 {
			t.Errorf("%s: WithoutAnswer() = %+v, want lastError %q", tt.describe, got, tt.want)
		}
	}
	if got := AnsweredError(500, echo); got != "the endpoint answered 500: "+echo {
		t.Errorf("AnsweredError = %q", got)
	}
}
