package petstore_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// sign returns the v1 signature of body at unix time t under secret, as the service
// makes it.
func sign(secret string, t int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.%s", t, body)
	return hex.EncodeToString(mac.Sum(nil))
}

func TestWebhookVerifierTakesOnlyWhatTheSecretSigned(t *testing.T) {
	const (
		secret = "whsec_current"
		old    = "whsec_previous"
		body   = `{"id":"evt_mfrggzdfmztwq2lknnwg23tpob","type":"order.placed","createdAt":"2026-11-21T12:00:30Z","data":{"id":10,"petId":1,"quantity":2,"complete":false,"accountId":2}}`
	)
	now := time.Date(2026, 11, 21, 12, 0, 30, 0, time.UTC)
	at := now.Unix()
	valid := sign(secret, at, body)
	tests := []struct {
		name      string
		header    string
		body      string        // body when empty
		tolerance time.Duration // the default when 0
		secret    string        // secret when empty
		want      error         // nil: taken
	}{
		{name: "one v1 made with the secret", header: fmt.Sprintf("t=%d,v1=%s", at, valid)},
		{name: "the new secret during a rotation's overlap", header: fmt.Sprintf("t=%d,v1=%s,v1=%s", at, valid, sign(old, at, body))},
		{name: "the old secret during a rotation's overlap", header: fmt.Sprintf("t=%d,v1=%s,v1=%s", at, valid, sign(old, at, body)), secret: old},
		{name: "v1 before t, with spaces, beside other schemes", header: fmt.Sprintf("v0=abc, v1=%s, t=%d, v2=%s", valid, at, strings.Repeat("0", 64))},
		{name: "signed 5 minutes ago, the edge of the tolerance", header: fmt.Sprintf("t=%d,v1=%s", at-300, sign(secret, at-300, body))},
		{name: "signed 5 minutes ahead", header: fmt.Sprintf("t=%d,v1=%s", at+300, sign(secret, at+300, body))},
		{name: "signed 9 minutes ago, within a tolerance of 10", header: fmt.Sprintf("t=%d,v1=%s", at-540, sign(secret, at-540, body)), tolerance: 10 * time.Minute},

		{name: "no header", header: "", want: petstore.ErrNoSignature},
		{name: "only white space", header: " ", want: petstore.ErrNoSignature},
		{name: "no v1, only schemes unknown here", header: fmt.Sprintf("t=%d,v0=%s,v2=%s", at, valid, valid), want: petstore.ErrNoSignature},
		{name: "no t", header: "v1=" + valid, want: petstore.ErrMalformedSignature},
		{name: "t twice", header: fmt.Sprintf("t=%d,t=%d,v1=%s", at, at, valid), want: petstore.ErrMalformedSignature},
		{name: "t not a number", header: "t=yesterday,v1=" + valid, want: petstore.ErrMalformedSignature},
		{name: "t with a sign", header: fmt.Sprintf("t=+%d,v1=%s", at, valid), want: petstore.ErrMalformedSignature},
		{name: "t out of range", header: "t=99999999999999999999,v1=" + valid, want: petstore.ErrMalformedSignature},
		{name: "v1 not hexadecimal", header: fmt.Sprintf("t=%d,v1=%s", at, strings.Repeat("z", 64)), want: petstore.ErrMalformedSignature},
		{name: "v1 too short", header: fmt.Sprintf("t=%d,v1=%s", at, valid[:62]), want: petstore.ErrMalformedSignature},
		{name: "a part without =", header: fmt.Sprintf("t=%d,v1=%s,junk", at, valid), want: petstore.ErrMalformedSignature},
		{name: "an empty part", header: fmt.Sprintf("t=%d,,v1=%s", at, valid), want: petstore.ErrMalformedSignature},
		{name: "another secret", header: fmt.Sprintf("t=%d,v1=%s", at, sign(old, at, body)), want: petstore.ErrSignatureMismatch},
		{name: "a changed body", header: fmt.Sprintf("t=%d,v1=%s", at, valid), body: strings.Replace(body, `"quantity":2`, `"quantity":20`, 1), want: petstore.ErrSignatureMismatch},
		{name: "a changed timestamp", header: fmt.Sprintf("t=%d,v1=%s", at+1, valid), want: petstore.ErrSignatureMismatch},
		{name: "the secret without whsec_", header: fmt.Sprintf("t=%d,v1=%s", at, valid), secret: "current", want: petstore.ErrSignatureMismatch},
		{name: "signed 5 minutes and 1 second ago", header: fmt.Sprintf("t=%d,v1=%s", at-301, sign(secret, at-301, body)), want: petstore.ErrTimestampOutOfTolerance},
		{name: "signed 6 minutes ahead", header: fmt.Sprintf("t=%d,v1=%s", at+360, sign(secret, at+360, body)), want: petstore.ErrTimestampOutOfTolerance},
		{name: "signed 9 minutes ago, with a tolerance of 1", header: fmt.Sprintf("t=%d,v1=%s", at-540, sign(secret, at-540, body)), tolerance: time.Minute, want: petstore.ErrTimestampOutOfTolerance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := petstore.WebhookVerifier{Secret: secret, Tolerance: tt.tolerance, Now: func() time.Time { return now }}
			if tt.secret != "" {
				v.Secret = tt.secret
			}
			b := body
			if tt.body != "" {
				b = tt.body
			}
			event, err := v.ConstructEvent([]byte(b), tt.header)
			if tt.want != nil {
				if !errors.Is(err, tt.want) || event != nil {
					t.Fatalf("ConstructEvent = %+v, %v; want %v", event, err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := petstore.Order{ID: 10, PetID: 1, Quantity: 2, AccountID: 2}
			if event.ID != "evt_mfrggzdfmztwq2lknnwg23tpob" || event.Type != petstore.EventTypeOrderPlaced ||
				!event.CreatedAt.Equal(now) || event.Order == nil || *event.Order != want {
				t.Errorf("event = %+v, order %+v; want order.placed of %+v", event, event.Order, want)
			}
		})
	}
}

// Each reason of a refusal is its own: a receiver can log which, and errors.Is tells
// them apart.
func TestWebhookRefusalsAreDistinct(t *testing.T) {
	reasons := []error{petstore.ErrNoSignature, petstore.ErrMalformedSignature, petstore.ErrSignatureMismatch, petstore.ErrTimestampOutOfTolerance}
	for i, a := range reasons {
		for j, b := range reasons {
			if i != j && (errors.Is(a, b) || a.Error() == b.Error()) {
				t.Errorf("%v and %v are not told apart", a, b)
			}
		}
	}
}

func TestConstructEventUsesTheClock(t *testing.T) {
	body := `{"id":"evt_a","type":"pet.status_changed","createdAt":"2026-11-21T12:00:30Z","data":{"id":4,"name":"Luna","description":"Shy.","tags":["calm"],"categoryId":2,"status":"sold"}}`
	now := time.Now().Unix()
	event, err := petstore.ConstructEvent([]byte(body), fmt.Sprintf("t=%d,v1=%s", now, sign("whsec_x", now, body)), "whsec_x")
	if err != nil {
		t.Fatal(err)
	}
	if want := (petstore.Pet{ID: 4, Name: "Luna", CategoryID: 2, Status: petstore.PetStatusSold, Description: "Shy.", Tags: []string{"calm"}, Photos: []petstore.Photo{}}); event.Pet == nil || !reflect.DeepEqual(*event.Pet, want) {
		t.Errorf("event = %+v, pet %+v", event, event.Pet)
	}
	// The same delivery, replayed ten minutes later.
	then := now - 600
	if _, err := petstore.ConstructEvent([]byte(body), fmt.Sprintf("t=%d,v1=%s", then, sign("whsec_x", then, body)), "whsec_x"); !errors.Is(err, petstore.ErrTimestampOutOfTolerance) {
		t.Errorf("a replay ten minutes later: err = %v, want ErrTimestampOutOfTolerance", err)
	}
}

func TestConstructEventNeedsASecret(t *testing.T) {
	body := `{"id":"evt_a","type":"order.placed","createdAt":"2026-11-21T12:00:30Z","data":{}}`
	now := time.Now().Unix()
	// Anyone can make the HMAC of an empty key: a receiver whose secret is missing from
	// its configuration must not take every delivery.
	if event, err := petstore.ConstructEvent([]byte(body), fmt.Sprintf("t=%d,v1=%s", now, sign("", now, body)), ""); err == nil {
		t.Errorf("an empty secret took the delivery: %+v", event)
	}
}

// A delivery's data is decoded by its type; a type this package does not know passes
// through with its raw data, and data of the wrong shape is an error, not a zero value.
func TestConstructEventDecodesTheDataByType(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(*petstore.Event) bool
		fails bool
	}{
		{"inventory", `{"id":"evt_b","type":"pet.sold_out","createdAt":"2026-11-21T12:00:30Z","data":{"petId":1,"quantity":0,"status":"sold"}}`,
			func(e *petstore.Event) bool {
				return e.Inventory != nil && *e.Inventory == petstore.InventoryItem{PetID: 1, Quantity: 0, Status: petstore.PetStatusSold} && e.Order == nil
			}, false},
		{"a test event's endpoint", `{"id":"evt_c","type":"webhook.test","createdAt":"2026-11-21T12:00:30Z","data":{"id":4,"url":"https://shop.example.com/hooks","events":["*"],"enabled":true,"createdAt":"2026-11-21T12:00:00Z","updatedAt":"2026-11-21T12:00:00Z"}}`,
			func(e *petstore.Event) bool {
				return e.Webhook != nil && e.Webhook.ID == 4 && e.Webhook.Events[0] == petstore.EventTypeAll && e.Webhook.Enabled
			}, false},
		{"a type unknown here", `{"id":"evt_d","type":"pet.adopted","createdAt":"2026-11-21T12:00:30Z","data":{"id":1,"family":"Smith"}}`,
			func(e *petstore.Event) bool {
				return e.Type == "pet.adopted" && e.Order == nil && e.Inventory == nil && e.Pet == nil && e.Webhook == nil &&
					string(e.Data) == `{"id":1,"family":"Smith"}`
			}, false},
		{"an order whose quantity is text", `{"id":"evt_e","type":"order.placed","createdAt":"2026-11-21T12:00:30Z","data":{"id":1,"quantity":"two"}}`, nil, true},
		{"not JSON", `{"id":`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now().Unix()
			event, err := petstore.ConstructEvent([]byte(tt.body), fmt.Sprintf("t=%d,v1=%s", now, sign("whsec_x", now, tt.body)), "whsec_x")
			if tt.fails {
				if err == nil || errors.Is(err, petstore.ErrSignatureMismatch) {
					t.Errorf("ConstructEvent = %+v, %v; want an error reading the event", event, err)
				}
				return
			}
			if err != nil || !tt.check(event) {
				t.Errorf("ConstructEvent = %+v, %v", event, err)
			}
		})
	}
}
