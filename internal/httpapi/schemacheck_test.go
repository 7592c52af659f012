package httpapi

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/petstore"
)

func servedSchemas(t *testing.T) (*requestSchemas, []byte) {
	t.Helper()
	doc, err := api.Render("http://localhost/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := newRequestSchemas(doc.JSON)
	if err != nil {
		t.Fatal(err)
	}
	return rs, doc.JSON
}

// The request schemas read from the served document cover every operation with a
// body, every pattern of the document is one Go can check, and the parameters a path
// shares are its operations'.
func TestRequestSchemasOfTheDocument(t *testing.T) {
	rs, raw := servedSchemas(t)
	for _, op := range []string{"placeOrder", "createPet", "updatePet", "createApiKey", "createAccount"} {
		if o := rs.ops[op]; o.Operation == nil || o.RequestBody == nil || o.RequestBody.Value.Content.Get("application/json") == nil {
			t.Errorf("%s: no application/json body schema", op)
		}
	}
	// kin refuses a document with a pattern Go's regexp cannot compile.
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("the document: %v", err)
	}
	var path []string
	for _, p := range rs.ops["retryDelivery"].params {
		if p.Value.In == "path" {
			path = append(path, p.Value.Name)
		}
	}
	if len(path) != 2 {
		t.Errorf("retryDelivery's path parameters: %q", path)
	}
	if got := pathParams("/webhooks/{webhookId}/deliveries/{deliveryId}/retry", []string{"7", "9"}); got["webhookId"] != "7" || got["deliveryId"] != "9" || len(got) != 2 {
		t.Errorf("path parameters by name: %v", got)
	}
}

// What kin-openapi cannot tell is told all the same: numbers not written in digits
// (kin reads 1e3 as the integer 1000), an int64 past its range (float64 rounds it
// back into range), unknown members (kin names them only in its sentence), and one
// problem a field. Lengths are in characters, as the generated validator counts them.
func TestRequestSchemasBeyondKin(t *testing.T) {
	rs, _ := servedSchemas(t)
	tests := []struct {
		op, body string
		want     []petstore.Detail
	}{
		{"placeOrder", `{"petId":1,"quantity":1e1}`, []petstore.Detail{{Field: "quantity", Problem: "must be an integer, written in digits only"}}},
		{"placeOrder", `{"petId":1,"quantity":2.0}`, []petstore.Detail{{Field: "quantity", Problem: "must be an integer, written in digits only"}}},
		{"placeOrder", `{"petId":9223372036854775808,"quantity":1}`, []petstore.Detail{{Field: "petId", Problem: "is out of range"}}},
		{"placeOrder", `{"petId":1,"quantity":1,"colour":"red","size":2}`, []petstore.Detail{
			{Field: "colour", Problem: "is not a known field"}, {Field: "size", Problem: "is not a known field"}}},
		{"placeOrder", `{"quantity":0}`, []petstore.Detail{{Field: "petId", Problem: "is required"}, {Field: "quantity", Problem: "must be at least 1"}}},
		{"createCategory", `{"name":"` + strings.Repeat("🐕", 100) + `"}`, nil},
		{"createCategory", `{"name":"` + strings.Repeat("🐕", 101) + `"}`, []petstore.Detail{{Field: "name", Problem: "must be at most 100 characters long"}}},
		{"createApiKey", `{"name":"k","scopes":[1,"pets:read"]}`, []petstore.Detail{{Field: "scopes[0]", Problem: "must be a string"}}},
		{"createPet", `{"name":"Rex","categoryId":1,"status":5}`, []petstore.Detail{{Field: "status", Problem: "must be a string"}}},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header.Set("Content-Type", "application/json")
		if got := rs.body(tt.op, r, []byte(tt.body)); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s:\n got %v\nwant %v", tt.op, tt.body, got, tt.want)
		}
	}
}

// A length bound reads in the unit of what is bounded: a list's in its items (named
// where listUnits knows the list, "items" where it does not), a string's in characters.
func TestLengthProblemUnits(t *testing.T) {
	tests := []struct {
		name, field, bound string
		n                  int
		list               bool
		want               string
	}{
		{"a named list", "tags", "most", 10, true, "must hold at most 10 tags"},
		{"a named list, one item", "scopes", "least", 1, true, "must hold at least 1 scope"},
		{"a list no unit names", "lines", "most", 5, true, "must hold at most 5 items"},
		{"a string", "name", "most", 100, false, "must be at most 100 characters long"},
		{"a named list reported as a string's length", "ids", "most", 100, false, "must hold at most 100 ids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lengthProblem(tt.field, tt.bound, tt.n, tt.list); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
