package petstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// What the pet calls send for each way of setting a price, and a price read back.
func TestPetPricesAreSentSetKeptAndRemoved(t *testing.T) {
	var mu sync.Mutex
	var sent string // Content-Type and body of the last request
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = r.Method + " " + r.Header.Get("Content-Type") + " " + string(body)
		mu.Unlock()
		answer(w, 200, `{"id":1,"name":"Rex","categoryId":2,"status":"available","stock":0,"price":1999,"currency":"EUR"}`)
	})
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		call func() (*petstore.Pet, error)
		want string
	}{
		{"a new pet with a price", func() (*petstore.Pet, error) {
			return c.CreatePet(ctx, petstore.NewPet{Name: "Rex", CategoryID: 2, Price: petstore.Ptr[int64](1999)})
		}, `POST application/json {"categoryId":2,"name":"Rex","price":1999}`},
		{"a new pet without one", func() (*petstore.Pet, error) {
			return c.CreatePet(ctx, petstore.NewPet{Name: "Rex", CategoryID: 2})
		}, `POST application/json {"categoryId":2,"name":"Rex"}`},
		{"a free pet: 0 is a price", func() (*petstore.Pet, error) {
			return c.CreatePet(ctx, petstore.NewPet{Name: "Rex", CategoryID: 2, Price: petstore.Ptr[int64](0)})
		}, `POST application/json {"categoryId":2,"name":"Rex","price":0}`},
		{"a replacement without a price keeps it", func() (*petstore.Pet, error) {
			return c.ReplacePet(ctx, 1, petstore.NewPet{Name: "Rex", CategoryID: 2})
		}, `PUT application/json {"categoryId":2,"name":"Rex"}`},
		{"a patch of the price", func() (*petstore.Pet, error) {
			return c.UpdatePet(ctx, 1, petstore.PetPatch{Price: petstore.Ptr[int64](2500)})
		}, `PATCH application/merge-patch+json {"price":2500}`},
		{"a patch that removes the price", func() (*petstore.Pet, error) {
			return c.UpdatePet(ctx, 1, petstore.PetPatch{Name: petstore.Ptr("Max"), RemovePrice: true})
		}, `PATCH application/merge-patch+json {"name":"Max","price":null}`},
		{"a patch without the price", func() (*petstore.Pet, error) {
			return c.UpdatePet(ctx, 1, petstore.PetPatch{Status: petstore.Ptr(petstore.PetStatusSold)})
		}, `PATCH application/merge-patch+json {"status":"sold"}`},
	} {
		pet, err := tt.call()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if pet.Price == nil || *pet.Price != 1999 || pet.Currency != "EUR" {
			t.Errorf("%s: pet = %+v, want the price 1999 EUR read back", tt.name, pet)
		}
		mu.Lock()
		if sent != tt.want {
			t.Errorf("%s sent %q, want %q", tt.name, sent, tt.want)
		}
		mu.Unlock()
	}

	sent = ""
	if _, err := c.UpdatePet(ctx, 1, petstore.PetPatch{Price: petstore.Ptr[int64](1), RemovePrice: true}); err == nil {
		t.Error("a patch that sets and removes the price was sent")
	}
	if sent != "" {
		t.Errorf("a patch that sets and removes the price sent %q", sent)
	}
}

// A pet without a price (no field in the answer) reads as nil, not as a free pet.
func TestAPetWithoutAPriceHasNoPrice(t *testing.T) {
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, `[{"id":1,"name":"Rex","categoryId":2,"status":"available","stock":4}]`)
	})
	pets, err := collect(c.ListPets(context.Background(), nil))
	if err != nil || len(pets) != 1 {
		t.Fatalf("pets = %+v, %v", pets, err)
	}
	if pets[0].Price != nil || pets[0].Currency != "" {
		t.Errorf("pet = %+v, want no price", pets[0])
	}
}

func TestListOrdersSendsItsFiltersAndReadsEveryField(t *testing.T) {
	var got string
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RequestURI()
		answer(w, 200, `[{"id":10,"petId":1,"quantity":2,"shipDate":"2026-12-24T10:00:00Z","complete":false,"accountId":2,`+
			`"status":"cancelled","createdAt":"2026-11-21T12:00:30Z","cancelledAt":"2026-11-21T13:00:00Z",`+
			`"unitPrice":1999,"total":3998,"currency":"EUR","petName":"Rex"},`+
			`{"id":9,"petId":3,"quantity":1,"complete":true,"accountId":2,"status":"completed","createdAt":"2026-11-20T08:00:00Z",`+
			`"completedAt":"2026-11-20T09:00:00Z","currency":"EUR"}]`)
	})
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	orders, err := collect(c.ListOrders(context.Background(), &petstore.ListOrdersOptions{
		AccountID: 2, Status: petstore.OrderStatusCancelled, Complete: petstore.Ptr(false),
		CreatedAfter: at("2026-11-01T00:00:00Z"), CreatedBefore: at("2026-12-01T00:00:00+01:00"),
		Sort: petstore.OrderSortOldest, Limit: 5,
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []*petstore.Order{{
		ID: 10, PetID: 1, Quantity: 2, ShipDate: at("2026-12-24T10:00:00Z"), AccountID: 2,
		Status: petstore.OrderStatusCancelled, CreatedAt: at("2026-11-21T12:00:30Z"), CancelledAt: at("2026-11-21T13:00:00Z"),
		UnitPrice: petstore.Ptr[int64](1999), Total: petstore.Ptr[int64](3998), Currency: "EUR", PetName: "Rex",
	}, {
		// Placed before the service kept prices: no price, no total, no name.
		ID: 9, PetID: 3, Quantity: 1, Complete: true, AccountID: 2, Status: petstore.OrderStatusCompleted,
		CreatedAt: at("2026-11-20T08:00:00Z"), CompletedAt: at("2026-11-20T09:00:00Z"), Currency: "EUR",
	}}
	if !reflect.DeepEqual(orders, want) {
		t.Errorf("orders = %+v\nwant     %+v", orders, want)
	}
	if want := "/v1/store/orders?accountId=2&status=cancelled&complete=false&createdAfter=2026-11-01T00%3A00%3A00Z" +
		"&createdBefore=2026-12-01T00%3A00%3A00%2B01%3A00&sort=oldest&limit=5"; got != want {
		t.Errorf("request %s\nwant    %s", got, want)
	}

	// Without options, nothing but the service's defaults.
	if _, err := collect(c.ListOrders(context.Background(), &petstore.ListOrdersOptions{})); err != nil {
		t.Fatal(err)
	}
	if got != "/v1/store/orders" {
		t.Errorf("request %s, want no filters", got)
	}
}

func TestGetSalesReportSendsItsOptionsAndReadsEveryField(t *testing.T) {
	var got string
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RequestURI()
		answer(w, 200, `{"from":"2026-11-01","to":"2026-11-30","groupBy":"category","currency":"JPY",`+
			`"totals":{"orders":3,"units":4,"revenue":5000,"cancelledOrders":1,"cancelledUnits":1,"cancelledRevenue":1000},`+
			`"groups":[{"categoryId":7,"categoryName":"Dogs","orders":2,"units":3,"revenue":4000,"cancelledOrders":1,"cancelledUnits":1,"cancelledRevenue":1000},`+
			`{"orders":1,"units":1,"revenue":1000,"cancelledOrders":0,"cancelledUnits":0,"cancelledRevenue":0},`+
			`{"day":"2026-11-21","petId":4,"petName":"Rex","orders":0,"units":0,"revenue":0,"cancelledOrders":0,"cancelledUnits":0,"cancelledRevenue":0}]}`)
	})
	// A time late on the 1st in UTC+2 is the 1st's evening in UTC: only the UTC date is sent.
	from := time.Date(2026, 11, 1, 23, 30, 0, 0, time.FixedZone("", 2*3600))
	report, err := c.GetSalesReport(context.Background(), &petstore.SalesReportOptions{
		From: from, To: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), GroupBy: petstore.SalesByCategory, Limit: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "/v1/store/sales?from=2026-11-01&to=2026-11-30&groupBy=category&limit=10"; got != want {
		t.Errorf("request %s, want %s", got, want)
	}
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	want := &petstore.SalesReport{
		From: day(1), To: day(30), GroupBy: petstore.SalesByCategory, Currency: "JPY",
		Totals: petstore.SalesFigures{Orders: 3, Units: 4, Revenue: 5000, CancelledOrders: 1, CancelledUnits: 1, CancelledRevenue: 1000},
		Groups: []petstore.SalesGroup{
			{CategoryID: 7, CategoryName: "Dogs", SalesFigures: petstore.SalesFigures{Orders: 2, Units: 3, Revenue: 4000, CancelledOrders: 1, CancelledUnits: 1, CancelledRevenue: 1000}},
			{SalesFigures: petstore.SalesFigures{Orders: 1, Units: 1, Revenue: 1000}},
			{Day: day(21), PetID: 4, PetName: "Rex"},
		},
	}
	if !reflect.DeepEqual(report, want) {
		t.Errorf("report = %+v\nwant     %+v", report, want)
	}

	if _, err := c.GetSalesReport(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got != "/v1/store/sales" {
		t.Errorf("request %s, want the service's defaults", got)
	}
}

// not_for_sale is a code of its own, so a storefront can tell "no price" from "sold out".
func TestNotForSaleIsItsOwnCode(t *testing.T) {
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		answer(w, 409, `{"code":"not_for_sale","message":"Pet 1 has no price, so it cannot be ordered.","status":409}`)
	})
	_, err := c.PlaceOrder(context.Background(), petstore.NewOrder{PetID: 1, Quantity: 1})
	var apiErr *petstore.Error
	if !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeNotForSale || apiErr.Status != http.StatusConflict {
		t.Errorf("err = %v, want a 409 not_for_sale", err)
	}
}
