package petstore

import (
	"context"
	"iter"
	"net/http"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// ListInventory returns the stock of every pet that passes the filters of opts (nil for
// none), by pet id.
func (c *Client) ListInventory(ctx context.Context, opts *ListInventoryOptions, callOpts ...CallOption) iter.Seq2[*InventoryItem, error] {
	return items(c.ListInventoryPages(ctx, opts, callOpts...))
}

// ListInventoryPages returns the stock of ListInventory a page at a time.
func (c *Client) ListInventoryPages(ctx context.Context, opts *ListInventoryOptions, callOpts ...CallOption) iter.Seq2[*Page[*InventoryItem], error] {
	var params api.ListInventoryParams
	if opts != nil {
		params = api.ListInventoryParams{
			Status: optional(api.PetStatus(opts.Status)),
			Ids:    optionalIDs(opts.IDs),
			Limit:  optional(int32Of(opts.Limit)),
			Cursor: optional(opts.Cursor),
		}
	}
	return pages(ctx, c, "listInventory", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListInventory(ctx, &params)
	}, inventoryFrom)
}

// GetInventory returns the stock of one pet.
func (c *Client) GetInventory(ctx context.Context, petID int64, opts ...CallOption) (*InventoryItem, error) {
	ctx = withCall(ctx, "getInventory", opts)
	v, err := decode[api.InventoryItem](c.api.GetInventory(ctx, petID))
	return convert(v, err, inventoryFrom)
}

// SetInventory sets the stock of a pet (admins; beta). Stock above 0 makes a sold or
// pending pet without incomplete orders available again; 0 makes an available pet sold.
func (c *Client) SetInventory(ctx context.Context, petID int64, update InventoryUpdate, opts ...CallOption) (*InventoryItem, error) {
	ctx = withCall(ctx, "setInventory", opts)
	v, err := decode[api.InventoryItem](c.api.SetInventory(ctx, petID, api.InventoryUpdate{Quantity: int32Of(update.Quantity)}))
	return convert(v, err, inventoryFrom)
}

// ListOrders returns orders (experimental), newest first unless opts.Sort says
// otherwise: a customer's own, cancelled ones included, or every order for an admin.
// opts may be nil.
func (c *Client) ListOrders(ctx context.Context, opts *ListOrdersOptions, callOpts ...CallOption) iter.Seq2[*Order, error] {
	return items(c.ListOrdersPages(ctx, opts, callOpts...))
}

// ListOrdersPages returns the orders of ListOrders a page at a time (experimental).
func (c *Client) ListOrdersPages(ctx context.Context, opts *ListOrdersOptions, callOpts ...CallOption) iter.Seq2[*Page[*Order], error] {
	var params api.ListOrdersParams
	if opts != nil {
		params = api.ListOrdersParams{
			AccountID:     optional(opts.AccountID),
			Status:        optional(api.OrderStatus(opts.Status)),
			Complete:      opts.Complete,
			CreatedAfter:  optionalTime(opts.CreatedAfter),
			CreatedBefore: optionalTime(opts.CreatedBefore),
			Sort:          optional(api.ListOrdersParamsSort(opts.Sort)),
			Limit:         optional(int32Of(opts.Limit)),
			Cursor:        optional(opts.Cursor),
		}
	}
	return pages(ctx, c, "listOrders", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListOrders(ctx, &params)
	}, orderFrom)
}

// PlaceOrder takes order.Quantity units of a pet off its stock, at the pet's price
// then (Order.UnitPrice and Total). The checks, in this order: an unknown or deleted
// pet is CodeNotFound; a pet without a price CodeNotForSale; a stock below the
// quantity (sold out included) CodeInsufficientStock; a pet staff took off sale
// CodeInvalidTransition.
//
// It always sends an Idempotency-Key (order.IdempotencyKey, or a random one), so it is
// retried like a GET: after a network error, a 429 or a 503, with the same key, and
// the service places the order at most once.
func (c *Client) PlaceOrder(ctx context.Context, order NewOrder, opts ...CallOption) (*Order, error) {
	ctx = withCall(ctx, "placeOrder", opts)
	key := order.IdempotencyKey
	if key == "" {
		var err error
		if key, err = newIdempotencyKey(); err != nil {
			return nil, err
		}
	}
	params := api.PlaceOrderParams{IdempotencyKey: &key}
	v, err := decode[api.Order](c.api.PlaceOrder(ctx, &params, order.body()))
	return convert(v, err, orderFrom)
}

// GetOrder returns one order; another account's order is CodeNotFound for a customer.
func (c *Client) GetOrder(ctx context.Context, id int64, opts ...CallOption) (*Order, error) {
	ctx = withCall(ctx, "getOrder", opts)
	v, err := decode[api.Order](c.api.GetOrder(ctx, id))
	return convert(v, err, orderFrom)
}

// UpdateOrder changes a placed order (admins). Completing it is one-way: any change to
// a completed or cancelled order is an *Error with CodeInvalidTransition.
func (c *Client) UpdateOrder(ctx context.Context, id int64, update OrderUpdate, opts ...CallOption) (*Order, error) {
	ctx = withCall(ctx, "updateOrder", opts)
	v, err := decode[api.Order](c.api.UpdateOrder(ctx, id, update.body()))
	return convert(v, err, orderFrom)
}

// CancelOrder cancels a placed order and puts its quantity back on the stock; the
// order stays, with OrderStatusCancelled. Cancelling a cancelled order changes nothing
// and succeeds, so a retry is safe. A complete order is an *Error with CodeConflict.
func (c *Client) CancelOrder(ctx context.Context, id int64, opts ...CallOption) error {
	ctx = withCall(ctx, "cancelOrder", opts)
	return noContent(c.api.CancelOrder(ctx, id))
}

// GetSalesReport returns what the shop sold over a range of days (admins): orders,
// units and revenue per day, pet or category, cancelled orders apart. opts may be nil
// for the last 30 days by day.
func (c *Client) GetSalesReport(ctx context.Context, opts *SalesReportOptions, callOpts ...CallOption) (*SalesReport, error) {
	ctx = withCall(ctx, "getSalesReport", callOpts)
	var params api.GetSalesReportParams
	if opts != nil {
		params = api.GetSalesReportParams{
			From:    optionalDate(opts.From),
			To:      optionalDate(opts.To),
			GroupBy: optional(api.GetSalesReportParamsGroupBy(opts.GroupBy)),
			Limit:   optional(int32Of(opts.Limit)),
		}
	}
	v, err := decode[api.SalesReport](c.api.GetSalesReport(ctx, &params))
	return convert(v, err, salesReportFrom)
}

// optionalTime is how the generated layer spells an optional instant: nil for zero.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// optionalDate is the UTC date of t, or nil for zero.
func optionalDate(t time.Time) *openapi_types.Date {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &openapi_types.Date{Time: time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)}
}
