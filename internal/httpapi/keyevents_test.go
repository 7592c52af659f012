package httpapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// keyChange is the data of an api_key.* event as the API shows it.
type keyChange struct {
	ID           int64      `json:"id"`
	Name         string     `json:"name"`
	Prefix       string     `json:"prefix"`
	CreatedAt    time.Time  `json:"createdAt"`
	Scopes       []string   `json:"scopes"`
	ExpiresAt    *time.Time `json:"expiresAt"`
	AccountID    int64      `json:"accountId"`
	AccountEmail string     `json:"accountEmail"`
	Actor        struct {
		Type      string `json:"type"`
		AccountID *int64 `json:"accountId"`
		KeyID     *int64 `json:"keyId"`
	} `json:"actor"`
}

// A shop audits its keys from its webhooks: an endpoint subscribed to api_key.created
// is sent every key made, one subscribed to "*" every key made and revoked, and none
// of them the secret. The feed shows the same events.
func TestAPIKeyEventsAreDeliveredWithoutTheSecret(t *testing.T) {
	a := newTestAPI(t)
	ws := a.webhookStore(t)
	made := a.webhook(t, "https://hooks.example.com/keys-made", "api_key.created")
	all := a.webhook(t, "https://hooks.example.com/all", "*")
	orders := a.webhook(t, "https://hooks.example.com/orders", "order.placed")

	var mine []struct {
		ID int64 `json:"id"`
	}
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: a.Customer}).expect(200, "").JSON(&mine)
	if len(mine) != 1 {
		t.Fatalf("the customer has %d keys, want 1", len(mine))
	}
	customerKey := mine[0].ID
	var created struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer,
		Body: map[string]any{"name": "warehouse sync", "scopes": []string{"pets:read"}}}).expect(201, "").JSON(&created)
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "ada@example.com", "password": "correct horse battery"}}).expect(201, "")
	var adas struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	ada := basic("ada@example.com", "correct horse battery")
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: ada, Body: map[string]any{"name": "laptop"}}).expect(201, "").JSON(&adas)
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", adas.ID), Auth: ada}).expect(204, "")
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", adas.ID), Auth: ada}).expect(404, "not_found") // no event

	// PostgreSQL shows an event, to the feed and to claims alike, once every
	// transaction begun before it has ended, which other tests' may delay.
	for deadline := time.Now().Add(10 * time.Second); len(a.events(t, "api_key.revoked")) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the feed shows no api_key.revoked event")
		}
	}
	jobs, err := ws.ClaimDeliveries(context.Background(), claimAt(time.Now().Add(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	// Deliveries are in no order (see the document); the feed's is by delivery id.
	slices.SortFunc(jobs, func(x, y petstore.DeliveryJob) int { return cmp.Compare(x.Delivery.ID, y.Delivery.ID) })
	sent := map[int64][]keyChange{}
	var types []string
	for _, j := range jobs {
		body, err := httpapi.EventEncoder(petstore.DefaultCurrency)(j.Event)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(body), created.Key) || strings.Contains(string(body), adas.Key) {
			t.Fatalf("a delivery holds a key's secret: %s", body)
		}
		var e event
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatal(err)
		}
		var c keyChange
		if err := json.Unmarshal(e.Data, &c); err != nil {
			t.Fatal(err)
		}
		sent[j.Webhook.ID] = append(sent[j.Webhook.ID], c)
		if j.Webhook.ID == all.ID {
			types = append(types, e.Type)
		}
		if j.Webhook.ID == made.ID && e.Type != "api_key.created" {
			t.Errorf("the endpoint subscribed to api_key.created was sent %s", e.Type)
		}
	}
	if want := []string{"api_key.created", "api_key.created", "api_key.revoked"}; !slices.Equal(types, want) {
		t.Fatalf("the endpoint subscribed to * was sent %v, want %v", types, want)
	}
	if n := len(sent[made.ID]); n != 2 {
		t.Fatalf("the endpoint subscribed to api_key.created was sent %d events, want 2", n)
	}
	if n := len(sent[orders.ID]); n != 0 {
		t.Fatalf("the endpoint subscribed to order.placed was sent %d key events", n)
	}

	t.Run("a key made with a key names the account and the key that made it", func(t *testing.T) {
		c := sent[made.ID][0]
		if c.ID != created.ID || c.Name != "warehouse sync" || !strings.HasPrefix(created.Key, c.Prefix) || len(c.Prefix) >= len(created.Key) ||
			!slices.Equal(c.Scopes, []string{"pets:read"}) || c.AccountID != a.CustomerID || c.AccountEmail != "customer@example.com" ||
			c.CreatedAt.IsZero() || c.Actor.Type != "key" || c.Actor.AccountID == nil || *c.Actor.AccountID != a.CustomerID ||
			c.Actor.KeyID == nil || *c.Actor.KeyID != customerKey {
			t.Errorf("the event shows %+v", c)
		}
	})
	t.Run("a key made and revoked with a password names the account and no key", func(t *testing.T) {
		for _, c := range sent[all.ID][1:] {
			if c.ID != adas.ID || c.AccountEmail != "ada@example.com" || c.Actor.Type != "password" ||
				c.Actor.AccountID == nil || *c.Actor.AccountID != c.AccountID || c.Actor.KeyID != nil {
				t.Errorf("the event shows %+v", c)
			}
		}
	})
	t.Run("the feed lists the same events, by type", func(t *testing.T) {
		if made, revoked := a.events(t, "api_key.created"), a.events(t, "api_key.revoked"); len(made) != 4 || len(revoked) != 1 {
			// The harness's admin and customer keys were made before the endpoints.
			t.Fatalf("the feed has %d api_key.created (want 4) and %d api_key.revoked (want 1)", len(made), len(revoked))
		}
	})
}
