package httpapi_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestInventory(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 0)
	t.Run("setting stock is admin only", func(t *testing.T) {
		a.do(t, req{Method: "PUT", Path: path("/v1/store/inventory/%d", p.ID), Key: a.Customer, Body: map[string]any{"quantity": 5}}).expect(403, "forbidden")
	})
	t.Run("stock is bounded to 0..1000000", func(t *testing.T) {
		for _, q := range []int{-1, 1_000_001} {
			a.do(t, req{Method: "PUT", Path: path("/v1/store/inventory/%d", p.ID), Key: a.Admin, Body: map[string]any{"quantity": q}}).expect(400, "validation_failed")
		}
		if inv := a.setStock(t, p.ID, 1_000_000); inv.Quantity != 1_000_000 {
			t.Fatalf("stock = %d", inv.Quantity)
		}
	})
	t.Run("a cancellation never takes the stock past its maximum: held units count when it is set", func(t *testing.T) {
		q := a.pet(t, "Mill", 1_000_000)
		o := a.order(t, a.Customer, q.ID, 100)
		res := a.do(t, req{Method: "PUT", Path: path("/v1/store/inventory/%d", q.ID), Key: a.Admin, Body: map[string]any{"quantity": 1_000_000}}).expect(409, "conflict")
		if !strings.Contains(string(res.Body), "at most 999900") {
			t.Errorf("the refusal does not say the largest count allowed: %s", res.Body)
		}
		a.setStock(t, q.ID, 999_900)
		a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", o.ID), Key: a.Customer}).expect(204, "")
		if inv := a.inventory(t, q.ID); inv.Quantity != 1_000_000 {
			t.Fatalf("stock after the cancellation = %d, want 1000000", inv.Quantity)
		}
	})
	t.Run("stock of an unknown pet is not found", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/store/inventory/98765", Key: a.Customer}).expect(404, "not_found")
		a.do(t, req{Method: "PUT", Path: "/v1/store/inventory/98765", Key: a.Admin, Body: map[string]any{"quantity": 1}}).expect(404, "not_found")
	})
	t.Run("0 makes an available pet sold and a count above 0 makes it available again", func(t *testing.T) {
		if inv := a.setStock(t, p.ID, 0); inv.Status != "sold" {
			t.Fatalf("status = %s, want sold", inv.Status)
		}
		if inv := a.setStock(t, p.ID, 3); inv.Status != "available" {
			t.Fatalf("status = %s, want available", inv.Status)
		}
	})
	t.Run("the list filters by status and pages by pet id", func(t *testing.T) {
		q := a.pet(t, "Quill", 0)
		a.setStock(t, q.ID, 0) // sold
		var items []inventory
		a.do(t, req{Method: "GET", Path: "/v1/store/inventory?status=sold", Key: a.Customer}).expect(200, "").JSON(&items)
		if len(items) != 1 || items[0].PetID != q.ID {
			t.Fatalf("sold items = %+v", items)
		}
		res := a.do(t, req{Method: "GET", Path: "/v1/store/inventory?limit=1", Key: a.Customer}).expect(200, "")
		res.JSON(&items)
		if len(items) != 1 || items[0].PetID != p.ID || nextPath(t, res.Header.Get("Link")) == "" {
			t.Fatalf("first page = %+v, Link %q", items, res.Header.Get("Link"))
		}
	})
	t.Run("ids is a batch lookup, as for pets", func(t *testing.T) {
		var ids []int64
		for i := range 25 {
			ids = append(ids, a.pet(t, fmt.Sprint("Batch ", i), i+1).ID)
		}
		a.setStock(t, ids[0], 0) // sold
		list := func(t *testing.T, query string) ([]int64, string) {
			t.Helper()
			var items []inventory
			res := a.do(t, req{Method: "GET", Path: "/v1/store/inventory?" + query, Key: a.Customer}).expect(200, "")
			res.JSON(&items)
			got := []int64{}
			for _, it := range items {
				got = append(got, it.PetID)
			}
			return got, nextPath(t, res.Header.Get("Link"))
		}
		// walk follows the next links from the first page, each of which must keep
		// the filters.
		walk := func(t *testing.T, query string) []int64 {
			t.Helper()
			got, next := list(t, query)
			for pages := 1; next != ""; pages++ {
				if pages > 5 {
					t.Fatal("pagination does not end")
				}
				var more []int64
				more, next = list(t, strings.TrimPrefix(next, "/v1/store/inventory?"))
				got = append(got, more...)
			}
			return got
		}
		t.Run("without limit, the page holds every id asked for, unknown ids left out", func(t *testing.T) {
			var q []string
			for _, id := range ids {
				q = append(q, fmt.Sprint(id))
			}
			got, next := list(t, "ids="+strings.Join(q, ",")+",99999")
			if fmt.Sprint(got) != fmt.Sprint(ids) || next != "" {
				t.Fatalf("got %v, next %q; want all %d ids on one page", got, next, len(ids))
			}
		})
		for _, q := range []string{
			path("ids=%d&ids=%d&ids=%d", ids[4], ids[0], ids[2]),
			path("ids=%d,%d,%d", ids[4], ids[0], ids[2]),
			path("ids=%d,%d&ids=%d", ids[4], ids[0], ids[2]),
			path("ids=%d%%2C%d&ids=%d", ids[4], ids[0], ids[2]),
		} {
			t.Run("spelt "+q+", alone and with status, a page at a time", func(t *testing.T) {
				for _, tt := range []struct {
					query string
					want  []int64
				}{
					{q + "&limit=2", []int64{ids[0], ids[2], ids[4]}},
					{q + "&limit=1&status=available", []int64{ids[2], ids[4]}},
					{q + "&status=sold", []int64{ids[0]}},
					{q + "&status=pending", []int64{}},
				} {
					if got := walk(t, tt.query); fmt.Sprint(got) != fmt.Sprint(tt.want) {
						t.Errorf("%s: got %v, want %v", tt.query, got, tt.want)
					}
				}
			})
		}
		for _, q := range []string{"ids=" + strings.Repeat("1,", 100) + "1", "ids=1,x", "ids=1,,2", "ids=0"} {
			t.Run("refused: "+q[:min(len(q), 12)], func(t *testing.T) {
				a.do(t, req{Method: "GET", Path: "/v1/store/inventory?" + q, Key: a.Customer}).expect(400, "validation_failed")
			})
		}
	})
}

// TestOrderRules is the mapping of placing an order to HTTP, one case per answer: the
// rules themselves are the domain's tables (petstore.TestTake), what a refusal leaves
// unchanged is the store suite's (storetest, orders). not_for_sale is TestSales'.
func TestOrderRules(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 3)

	t.Run("an order is 201 with the order and its Location", func(t *testing.T) {
		res := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 2, "shipDate": "2026-12-24T10:00:00Z"}}).expect(201, "")
		var o order
		res.JSON(&o)
		if o.Complete || o.Quantity != 2 || o.AccountID != a.CustomerID || o.ShipDate == nil || res.Header.Get("Location") != path("/v1/store/orders/%d", o.ID) {
			t.Fatalf("order %+v at %q", o, res.Header.Get("Location"))
		}
	})
	t.Run("more than the stock (1 left) is 409 insufficient_stock, naming the stock", func(t *testing.T) {
		res := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 2}}).expect(409, "insufficient_stock")
		if !strings.Contains(string(res.Body), "1 in stock") {
			t.Errorf("the refusal does not name the stock: %s", res.Body)
		}
	})
	bounds := []struct {
		name string
		body map[string]any
		code string
		st   int
	}{
		{"quantity 0 is refused", map[string]any{"petId": p.ID, "quantity": 0}, "validation_failed", 400},
		{"quantity 101 is refused", map[string]any{"petId": p.ID, "quantity": 101}, "validation_failed", 400},
		{"a date that is not RFC 3339 is refused", map[string]any{"petId": p.ID, "quantity": 1, "shipDate": "tomorrow"}, "validation_failed", 400},
		{"an unknown pet is not found", map[string]any{"petId": 99999, "quantity": 1}, "not_found", 404},
		{"complete cannot be set by the customer", map[string]any{"petId": p.ID, "quantity": 1, "complete": true}, "validation_failed", 400},
	}
	for _, tt := range bounds {
		t.Run(tt.name, func(t *testing.T) {
			a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: tt.body}).expect(tt.st, tt.code)
		})
	}
}

// TestOrderLifecycle is the mapping of cancelling and completing to HTTP; the rules
// (stock put back, statuses, what a complete order refuses) are the domain's tables
// (petstore.TestReturn, TestFulfil) and the store suite's (orders, order updates).
func TestOrderLifecycle(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 2)
	first := a.order(t, a.Customer, p.ID, 1)
	second := a.order(t, a.Customer, p.ID, 1)

	t.Run("a cancel is 204, again too; the order reads cancelled and refuses completion", func(t *testing.T) {
		a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", second.ID), Key: a.Customer}).expect(204, "")
		var got order
		a.do(t, req{Method: "GET", Path: path("/v1/store/orders/%d", second.ID), Key: a.Customer}).expect(200, "").JSON(&got)
		if got.Status != "cancelled" || got.CancelledAt == nil || got.Complete {
			t.Fatalf("the cancelled order reads %+v", got)
		}
		a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", second.ID), Key: a.Customer}).expect(204, "")
		a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", second.ID), Key: a.Admin, Body: map[string]any{"complete": true}}).expect(409, "invalid_transition")
	})
	t.Run("completing is admin only", func(t *testing.T) {
		a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", first.ID), Key: a.Customer, Body: map[string]any{"complete": true}}).expect(403, "forbidden")
	})
	t.Run("an admin sets the ship date and completes the order", func(t *testing.T) {
		var o order
		a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", first.ID), Key: a.Admin, Body: map[string]any{"shipDate": "2026-12-01T09:30:00Z"}}).expect(200, "").JSON(&o)
		if o.Complete || o.ShipDate == nil || o.ShipDate.Format("2006-01-02T15:04:05Z07:00") != "2026-12-01T09:30:00Z" {
			t.Fatalf("order %+v", o)
		}
		a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", first.ID), Key: a.Admin, Body: map[string]any{"complete": true}}).expect(200, "").JSON(&o)
		if !o.Complete {
			t.Fatalf("order %+v", o)
		}
	})
	t.Run("a complete order refuses a change (409 invalid_transition) and a cancel (409 conflict)", func(t *testing.T) {
		a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", first.ID), Key: a.Admin, Body: map[string]any{"complete": false}}).expect(409, "invalid_transition")
		a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", first.ID), Key: a.Customer}).expect(409, "conflict")
	})
}

func TestOrdersAreIsolatedBetweenAccounts(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 10)
	other, otherID := a.newKey("other@example.com", "customer")
	mine := a.order(t, a.Customer, p.ID, 1)
	theirs := a.order(t, other, p.ID, 2)

	t.Run("another account's order is not found, exactly like a missing one", func(t *testing.T) {
		got := a.do(t, req{Method: "GET", Path: path("/v1/store/orders/%d", theirs.ID), Key: a.Customer}).expect(404, "not_found")
		missing := a.do(t, req{Method: "GET", Path: "/v1/store/orders/999999", Key: a.Customer}).expect(404, "not_found")
		if strings.ReplaceAll(string(got.Body), fmt.Sprint(theirs.ID), "N") != strings.ReplaceAll(string(missing.Body), "999999", "N") {
			t.Fatalf("the answers differ:\n%s\n%s", got.Body, missing.Body)
		}
		a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", theirs.ID), Key: a.Customer}).expect(404, "not_found")
		a.do(t, req{Method: "GET", Path: path("/v1/store/orders/%d", theirs.ID), Key: other}).expect(200, "")
	})
	t.Run("a customer lists only its own orders, whatever accountId it names", func(t *testing.T) {
		for _, q := range []string{"", fmt.Sprintf("?accountId=%d", otherID)} {
			var orders []order
			a.do(t, req{Method: "GET", Path: "/v1/store/orders" + q, Key: a.Customer}).expect(200, "").JSON(&orders)
			for _, o := range orders {
				if o.AccountID != a.CustomerID {
					t.Fatalf("%q shows order %+v of another account", q, o)
				}
			}
			if q == "" && (len(orders) != 1 || orders[0].ID != mine.ID) {
				t.Fatalf("own orders = %+v", orders)
			}
		}
	})
	t.Run("an admin sees every order and filters by account and completion", func(t *testing.T) {
		var orders []order
		a.do(t, req{Method: "GET", Path: "/v1/store/orders", Key: a.Admin}).expect(200, "").JSON(&orders)
		if len(orders) != 2 {
			t.Fatalf("admin sees %d orders", len(orders))
		}
		a.do(t, req{Method: "GET", Path: fmt.Sprintf("/v1/store/orders?accountId=%d&complete=false", otherID), Key: a.Admin}).expect(200, "").JSON(&orders)
		if len(orders) != 1 || orders[0].ID != theirs.ID {
			t.Fatalf("filtered = %+v", orders)
		}
		a.do(t, req{Method: "GET", Path: "/v1/store/orders?complete=true", Key: a.Admin}).expect(200, "").JSON(&orders)
		if len(orders) != 0 {
			t.Fatalf("complete orders = %+v", orders)
		}
		a.do(t, req{Method: "GET", Path: path("/v1/store/orders/%d", mine.ID), Key: a.Admin}).expect(200, "")
	})
}

func TestIdempotentOrders(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 10)
	body := map[string]any{"petId": p.ID, "quantity": 2}
	key := map[string]string{"Idempotency-Key": "order-7f3a"}

	first := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: body, Header: key}).expect(201, "")
	t.Run("the same key and body answer the first response and place nothing new", func(t *testing.T) {
		again := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: `{ "quantity": 2, "petId": ` + fmt.Sprint(p.ID) + ` }`, Header: key}).expect(201, "")
		if string(again.Body) != string(first.Body) || again.Header.Get("Location") != first.Header.Get("Location") {
			t.Fatalf("replay differs:\n%s %s\n%s %s", first.Body, first.Header.Get("Location"), again.Body, again.Header.Get("Location"))
		}
		if inv := a.inventory(t, p.ID); inv.Quantity != 8 {
			t.Fatalf("stock = %d, want 8", inv.Quantity)
		}
	})
	t.Run("the same key with another body is idempotency_key_reused", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 3}, Header: key}).expect(422, "idempotency_key_reused")
	})
	t.Run("a replay after the order was cancelled is the first answer, and places nothing", func(t *testing.T) {
		q := a.pet(t, "Fido", 5)
		k := map[string]string{"Idempotency-Key": "cancel-then-replay"}
		b := map[string]any{"petId": q.ID, "quantity": 1}
		placed := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: b, Header: k}).expect(201, "")
		loc := placed.Header.Get("Location")
		a.do(t, req{Method: "DELETE", Path: loc, Key: a.Customer}).expect(204, "")
		again := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: b, Header: k}).expect(201, "")
		if string(again.Body) != string(placed.Body) || again.Header.Get("Location") != loc {
			t.Fatalf("the replay after a cancel differs from the first answer:\n%s %s\n%s %s", placed.Body, loc, again.Body, again.Header.Get("Location"))
		}
		var now order
		a.do(t, req{Method: "GET", Path: loc, Key: a.Customer}).expect(200, "").JSON(&now)
		if now.Status != "cancelled" {
			t.Fatalf("the order at Location is %+v, want it cancelled", now)
		}
		if inv := a.inventory(t, q.ID); inv.Quantity != 5 {
			t.Fatalf("stock = %d after a cancel and a replay, want 5: the replay placed the order again", inv.Quantity)
		}
	})
	t.Run("keys are scoped to the account", func(t *testing.T) {
		other, _ := a.newKey("other@example.com", "customer")
		a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: other, Body: body, Header: key}).expect(201, "")
		if inv := a.inventory(t, p.ID); inv.Quantity != 6 {
			t.Fatalf("stock = %d, want 6", inv.Quantity)
		}
	})
	t.Run("a refusal is replayed too", func(t *testing.T) {
		k := map[string]string{"Idempotency-Key": "too-many"}
		a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 50}, Header: k}).expect(409, "insufficient_stock")
		a.setStock(t, p.ID, 100)
		a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 50}, Header: k}).expect(409, "insufficient_stock")
	})
	t.Run("a malformed key is refused", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: body, Header: map[string]string{"Idempotency-Key": "has space"}}).expect(400, "validation_failed")
	})
}

// TestNoOverselling places 240 concurrent orders from several customers against a
// stock of 50: exactly the stock is sold and every refusal says why.
func TestNoOverselling(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 50)
	keys := []string{a.Customer}
	for i := range 5 {
		k, _ := a.newKey(fmt.Sprintf("buyer%d@example.com", i), "customer")
		keys = append(keys, k)
	}
	const requests = 240
	var (
		mu       sync.Mutex
		accepted int
		refusals = map[string]int{}
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			qty := 1 + i%4
			res := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: keys[i%len(keys)], Body: map[string]any{"petId": p.ID, "quantity": qty}})
			mu.Lock()
			defer mu.Unlock()
			switch res.Status {
			case 201:
				var o order
				res.JSON(&o)
				accepted += o.Quantity
			case 409:
				refusals[res.Code()]++
			default:
				t.Errorf("unexpected %d: %s", res.Status, res.Body)
			}
		}()
	}
	close(start)
	wg.Wait()

	if accepted != 50 {
		t.Fatalf("accepted %d units of a stock of 50", accepted)
	}
	for code := range refusals {
		if code != "insufficient_stock" && code != "invalid_transition" {
			t.Errorf("refusal with code %s", code)
		}
	}
	inv := a.inventory(t, p.ID)
	if inv.Quantity != 0 || inv.Status != "pending" {
		t.Fatalf("after selling out: %+v, want 0 pending", inv)
	}
	var orders []order
	a.do(t, req{Method: "GET", Path: "/v1/store/orders?limit=100", Key: a.Admin}).JSON(&orders)
	sum := 0
	for _, o := range orders {
		sum += o.Quantity
	}
	if sum != 50 {
		t.Fatalf("orders hold %d units, want 50", sum)
	}
}

// A ship date is bounded to this century: a date that is year 10000 in UTC used to be
// stored and then break every listing of orders.
func TestShipDatesOutOfBoundsAreRefused(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 5)
	for _, date := range []string{"9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00Z", "1999-12-31T23:59:59Z", "2100-01-01T00:00:00Z"} {
		res := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 1, "shipDate": date}}).expect(400, "validation_failed")
		if !strings.Contains(string(res.Body), `"field":"shipDate"`) {
			t.Errorf("shipDate %s: %s", date, res.Body)
		}
	}
	o := a.order(t, a.Customer, p.ID, 1)
	a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", o.ID), Key: a.Admin, Body: map[string]any{"shipDate": "9999-12-31T23:59:59-23:59"}}).expect(400, "validation_failed")
	a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", o.ID), Key: a.Admin, Body: map[string]any{"shipDate": "2099-12-31T23:59:59Z"}}).expect(200, "")
	a.do(t, req{Method: "GET", Path: "/v1/store/orders", Key: a.Admin}).expect(200, "")
	if inv := a.inventory(t, p.ID); inv.Quantity != 4 {
		t.Errorf("stock = %d, want 4: the refused orders took nothing", inv.Quantity)
	}
}
