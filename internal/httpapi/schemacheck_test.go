package httpapi

import (
	"testing"

	"github.com/acme-pets/petstore/api"
)

// The request schemas read from the served document cover every operation with a
// body, and every pattern of the document is one Go can check.
func TestRequestSchemasOfTheDocument(t *testing.T) {
	doc, err := api.Render("http://localhost/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := newRequestSchemas(doc.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"placeOrder", "createPet", "updatePet", "createApiKey", "createAccount"} {
		if rs.bodies[op]["application/json"] == nil {
			t.Errorf("%s: no application/json body schema", op)
		}
	}
	if len(rs.patterns) == 0 {
		t.Error("no patterns read")
	}
	for src, re := range rs.patterns {
		if re == nil {
			t.Errorf("pattern %q does not compile in Go: its fields are not checked", src)
		}
	}
	if got := rs.pathParams["retryDelivery"]; len(got) != 2 {
		t.Errorf("retryDelivery's path parameters: %q", got)
	}
}
