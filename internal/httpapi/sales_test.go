package httpapi_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

type salesFigures struct {
	Orders, Units, Revenue                            int64
	CancelledOrders, CancelledUnits, CancelledRevenue int64
}

type salesReport struct {
	From, To, GroupBy, Currency string
	Totals                      salesFigures
	Groups                      []struct {
		Day          string
		PetID        int64 `json:"petId"`
		PetName      string
		CategoryID   int64 `json:"categoryId"`
		CategoryName string
		salesFigures
	}
}

// TestPricesAndTheSalesReport: a price is set, kept by a PUT without one and taken
// away by null; an order keeps the price it was placed at; the report counts orders
// by day, pet and category, cancelled ones apart, for staff with sales:read only.
func TestPricesAndTheSalesReport(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 10) // priced 1999 by the harness
	var got pet
	a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d", p.ID), Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": p.CategoryID}}).expect(200, "").JSON(&got)
	if got.Price == nil || *got.Price != 1999 || got.Currency != "EUR" {
		t.Fatalf("a PUT without a price changed it: %+v", got)
	}
	for _, bad := range []string{`{"price":-1}`, `{"price":100000001}`, `{"price":1.5}`, `{"price":"10"}`} {
		a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", p.ID), Key: a.Admin, Body: bad}).expect(400, "validation_failed")
	}
	first := a.order(t, a.Customer, p.ID, 2)
	a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", p.ID), Key: a.Admin, Body: `{"price":500,"name":"Rex II"}`}).expect(200, "")
	second := a.order(t, a.Customer, p.ID, 1)
	if *first.UnitPrice != 1999 || *first.Total != 3998 || first.PetName != "Rex" || *second.UnitPrice != 500 || second.PetName != "Rex II" {
		t.Fatalf("orders placed at %+v and %+v", first, second)
	}
	var again order
	a.do(t, req{Method: "GET", Path: path("/v1/store/orders/%d", first.ID), Key: a.Customer}).expect(200, "").JSON(&again)
	if *again.UnitPrice != 1999 || again.PetName != "Rex" || again.Currency != "EUR" {
		t.Fatalf("the first order now reads %+v", again)
	}
	a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", second.ID), Key: a.Customer}).expect(204, "")

	today := time.Now().UTC().Format(time.DateOnly)
	var r salesReport
	a.do(t, req{Method: "GET", Path: "/v1/store/sales", Key: a.Admin}).expect(200, "").JSON(&r)
	want := salesFigures{Orders: 1, Units: 2, Revenue: 3998, CancelledOrders: 1, CancelledUnits: 1, CancelledRevenue: 500}
	if r.Totals != want || r.Currency != "EUR" || r.GroupBy != "day" || r.To != today || len(r.Groups) != 1 || r.Groups[0].Day != today {
		t.Fatalf("the default report (the last 30 days by day): %+v", r)
	}
	a.do(t, req{Method: "GET", Path: "/v1/store/sales?groupBy=pet&from=" + today + "&to=" + today, Key: a.Admin}).expect(200, "").JSON(&r)
	if len(r.Groups) != 1 || r.Groups[0].PetID != p.ID || r.Groups[0].PetName != "Rex II" || r.Groups[0].salesFigures != want {
		t.Fatalf("by pet: %+v", r)
	}
	a.do(t, req{Method: "GET", Path: "/v1/store/sales?groupBy=category&limit=1", Key: a.Admin}).expect(200, "").JSON(&r)
	if len(r.Groups) != 1 || r.Groups[0].CategoryID != p.CategoryID || r.Groups[0].CategoryName == "" {
		t.Fatalf("by category: %+v", r)
	}

	// Taking the price away makes the pet not for sale.
	got = pet{}
	a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", p.ID), Key: a.Admin, Body: `{"price":null}`}).expect(200, "").JSON(&got)
	if got.Price != nil || got.Currency != "" {
		t.Fatalf("a pet without a price reads %+v", got)
	}
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 1}}).expect(409, "not_for_sale")

	refusals := []struct {
		name, query string
		key         string
		status      int
		code        string
	}{
		{"a customer", "", a.Customer, 403, "forbidden"},
		{"from after to", "?from=2026-02-01&to=2026-01-31", a.Admin, 400, "validation_failed"},
		{"more than 366 days", "?from=2025-01-01&to=2026-01-02", a.Admin, 400, "validation_failed"},
		{"an unknown grouping", "?groupBy=week", a.Admin, 400, "validation_failed"},
		{"a date that is no date", "?from=" + url.QueryEscape("2026-02-30"), a.Admin, 400, "validation_failed"},
		{"a limit past 1000", "?groupBy=pet&limit=1001", a.Admin, 400, "validation_failed"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			a.do(t, req{Method: "GET", Path: "/v1/store/sales" + tt.query, Key: tt.key}).expect(tt.status, tt.code)
		})
	}
	t.Run("a staff key without sales:read", func(t *testing.T) {
		var k struct{ Key string }
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Admin, Body: map[string]any{"name": "clerk", "scopes": []string{"orders:read"}}}).expect(201, "").JSON(&k)
		res := a.do(t, req{Method: "GET", Path: "/v1/store/sales", Key: k.Key}).expect(403, "insufficient_scope")
		if got := res.Header.Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope", scope="sales:read"` {
			t.Errorf("WWW-Authenticate %q", got)
		}
	})
	t.Run("the whole year is one report", func(t *testing.T) {
		from := time.Now().UTC().AddDate(0, 0, -365).Format(time.DateOnly)
		a.do(t, req{Method: "GET", Path: fmt.Sprintf("/v1/store/sales?from=%s&to=%s", from, today), Key: a.Admin}).expect(200, "")
	})
}
