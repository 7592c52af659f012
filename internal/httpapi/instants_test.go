package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Every date-time of every request body, found in the document, is bounded to what
// the API can write back: an instant whose offset carries it out of the years
// 0001–9999 in UTC is refused naming the field, and changes nothing. A key's
// expiresAt of 9999-12-31T23:59:59-23:59 (year 10000 in UTC) answered 500 on both
// stores: its event's JSON failed inside the transaction.
func TestEveryRequestInstantIsBounded(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	var fields []textField
	for _, f := range a.requestStrings(t) {
		if f.Kind == kindDateTime {
			fields = append(fields, f)
		}
	}
	if len(fields) < 3 {
		t.Fatalf("found the date-times %v; the document has at least expiresAt and two shipDates", fields)
	}
	for _, f := range fields {
		for _, at := range []string{"9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "0000-01-01T00:00:00Z"} {
			t.Run(f.String()+"/"+at, func(t *testing.T) {
				before := a.state(t)
				r := w.request(t, f.Op, a.keyFor(f.Op))
				r.Body = withField(t, r.Body.(string), f.Path, at)
				res := a.do(t, r).expect(400, "validation_failed")
				if want := fmt.Sprintf(`"field":%q`, f.Field()); !strings.Contains(string(res.Body), want) {
					t.Errorf("the refusal does not name %s: %s", f.Field(), res.Body)
				}
				if after := a.state(t); !bytes.Equal(before, after) {
					t.Errorf("a refused request changed the state:\n%s\n%s", before, after)
				}
			})
		}
	}
}

// The key of the security test of issue 30: refused in words that say why, and the
// last second of 9999 is an expiry like any other, in the answer, the list and the
// key's event.
func TestAKeyExpiryPastYear9999IsRefused(t *testing.T) {
	a := newTestAPI(t)
	res := a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"far","expiresAt":"9999-12-31T23:59:59-23:59"}`}).expect(400, "validation_failed")
	if want := `{"field":"expiresAt","problem":"must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC, its offset applied"}`; !strings.Contains(string(res.Body), want) {
		t.Errorf("details lack %s: %s", want, res.Body)
	}
	var made struct{ ExpiresAt string }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"far","expiresAt":"9999-12-31T23:59:59+23:59"}`}).expect(201, "").JSON(&made)
	if made.ExpiresAt != "9999-12-31T00:00:59Z" {
		t.Errorf("expiresAt = %q, want it in UTC", made.ExpiresAt)
	}
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: a.Customer}).expect(200, "")
	events := a.events(t, "api_key.created")
	if len(events) == 0 {
		t.Fatal("no api_key.created event")
	}
	var data struct{ ExpiresAt string }
	if err := json.Unmarshal(events[len(events)-1].Data, &data); err != nil || data.ExpiresAt != made.ExpiresAt {
		t.Errorf("the event's expiresAt = %q (%v), want %q", data.ExpiresAt, err, made.ExpiresAt)
	}
}
