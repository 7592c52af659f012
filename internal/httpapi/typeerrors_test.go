package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

// A value of the wrong JSON type, or a string of the wrong format, is refused like
// every other invalid value: 400 validation_failed, with details naming the field and
// saying what it must be, in the document's terms (issue 32: these answered a generic
// "does not match the schema" with no details).
func TestTypeErrorsNameTheField(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 5)
	order := func(fields string) string { return fmt.Sprintf(`{"petId":%d,"quantity":1%s}`, p.ID, fields) }
	const (
		integer  = "must be an integer"
		digits   = "must be an integer, written in digits only"
		dateTime = "must be a date and time (RFC 3339) such as 2026-12-24T10:00:00Z"
		date     = "must be a date (YYYY-MM-DD) such as 2026-12-24"
	)
	tests := []struct {
		name, method, path, key, body, field, problem string
	}{
		// Bodies.
		{"an integer sent as a string", "POST", "/v1/store/orders", a.Customer, fmt.Sprintf(`{"petId":%d,"quantity":"2"}`, p.ID), "quantity", integer},
		{"an integer with a fraction", "POST", "/v1/store/orders", a.Customer, fmt.Sprintf(`{"petId":%d,"quantity":1.5}`, p.ID), "quantity", digits},
		{"an integer with an exponent", "POST", "/v1/store/orders", a.Customer, fmt.Sprintf(`{"petId":%d,"quantity":1e3}`, p.ID), "quantity", digits},
		{"an integer past int32 and the maximum", "POST", "/v1/store/orders", a.Customer, fmt.Sprintf(`{"petId":%d,"quantity":99999999999}`, p.ID), "quantity", "must be at most 100"},
		{"an id past int64", "POST", "/v1/store/orders", a.Customer, `{"petId":99999999999999999999,"quantity":1}`, "petId", "is out of range"},
		{"a null id", "POST", "/v1/store/orders", a.Customer, `{"petId":null,"quantity":1}`, "petId", "must not be null"},
		{"a missing member", "POST", "/v1/store/orders", a.Customer, fmt.Sprintf(`{"petId":%d}`, p.ID), "quantity", "is required"},
		{"a date for a date-time", "POST", "/v1/store/orders", a.Customer, order(`,"shipDate":"2026-01-01"`), "shipDate", dateTime},
		{"a key's expiry as a date", "POST", "/v1/api-keys", a.Customer, `{"name":"k","expiresAt":"2026-01-01"}`, "expiresAt", dateTime},
		{"a number in a list of strings", "POST", "/v1/api-keys", a.Customer, `{"name":"k","scopes":[1]}`, "scopes[0]", "must be a string"},
		{"a string for a boolean", "PATCH", fmt.Sprintf("/v1/store/orders/%d", 1), a.Admin, `{"complete":"yes"}`, "complete", "must be true or false"},
		{"a number for a string", "POST", "/v1/categories", a.Admin, `{"name":5}`, "name", "must be a string"},
		{"a string for a merge patch's integer", "PATCH", fmt.Sprintf("/v1/pets/%d", p.ID), a.Admin, `{"price":"x"}`, "price", integer},
		// Query parameters.
		{"a date for a date-time filter", "GET", "/v1/store/orders?createdAfter=2026-01-01", a.Admin, "", "createdAfter", dateTime},
		{"a date-time for a date", "GET", "/v1/store/sales?from=2026-01-01T00:00:00Z", a.Admin, "", "from", date},
		{"a word for a boolean", "GET", "/v1/store/orders?complete=yes", a.Admin, "", "complete", "must be true or false"},
		{"a fraction for a page size", "GET", "/v1/pets?limit=1.5", a.Customer, "", "limit", integer},
		{"a word in a list of ids", "GET", "/v1/pets?ids=1,x", a.Customer, "", "ids", integer},
		// Path parameters.
		{"a word for an id", "GET", "/v1/pets/abc", a.Customer, "", "petId", integer},
		{"an exponent for an id", "GET", "/v1/store/orders/1e3", a.Customer, "", "orderId", integer},
		{"an id past int64", "GET", "/v1/categories/99999999999999999999", a.Customer, "", "categoryId", "is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req{Method: tt.method, Path: tt.path, Key: tt.key}
			if tt.body != "" {
				r.Body = tt.body
			}
			res := a.do(t, r).expect(400, "validation_failed")
			if want := fmt.Sprintf(`{"field":%q,"problem":%q}`, tt.field, tt.problem); !strings.Contains(string(res.Body), want) {
				t.Errorf("details lack %s: %s", want, res.Body)
			}
			if strings.Contains(string(res.Body), "2006-01-02") || strings.Contains(string(res.Body), "decode") {
				t.Errorf("the answer is in the generator's words: %s", res.Body)
			}
		})
	}
	// A body that is no object has no field to name; it still says what it must be.
	res := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: `[1]`}).expect(400, "validation_failed")
	if !strings.Contains(string(res.Body), "The request body must be an object") {
		t.Errorf("a JSON array as the body: %s", res.Body)
	}
}
