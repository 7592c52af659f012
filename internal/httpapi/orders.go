package httpapi

import (
	"context"
	"crypto/sha256"
	"net/url"
	"strconv"
	"time"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// PlaceOrder places an order. With an Idempotency-Key, the store records the result
// (the order or the refusal) on the key in the order's own transaction, and answers a
// retry with it: the first answer and every replay are rendered here from that one
// result, so they are the same.
func (h *Handler) PlaceOrder(ctx context.Context, req *oas.NewOrder, params oas.PlaceOrderParams) (oas.PlaceOrderRes, error) {
	p := principal(ctx)
	o := petstore.NewOrder{AccountID: p.AccountID, PetID: req.PetId, Quantity: int(req.Quantity), ShipDate: optTime(req.ShipDate)}
	if key, ok := params.IdempotencyKey.Get(); ok {
		o.Idempotency = &petstore.IdempotencyKey{AccountID: p.AccountID, Key: key, RequestHash: orderHash(o)}
	}
	placed, err := h.store.PlaceOrder(ctx, o)
	if !placed.Replayed {
		h.countOrder(err)
	}
	// Readiness follows whether orders commit (readiness.go). Only an order placed
	// now proves a commit: a replay or a refusal may have been answered from a read.
	// The request's own deadline says nothing of the store.
	switch code := petstore.ErrorCode(err); {
	case err == nil && !placed.Replayed:
		h.orders.committed()
	case err != nil && ctx.Err() == nil && (code == petstore.EUnavailable || code == petstore.EInternal && h.store.Unavailable(err)):
		if h.orders.failed(h.now()) {
			h.log.WarnContext(ctx, "orders fail to commit; /readyz answers 503 until one does, or 5 s pass without a failure", "failed_in_a_row", orderFailureRun, "err", err)
		}
	}
	if err != nil {
		return nil, err
	}
	return &oas.OrderHeaders{Location: apiPrefix + "/store/orders/" + strconv.FormatInt(placed.Order.ID, 10), Response: h.toOrder(placed.Order)}, nil
}

// countOrder records an order placed or refused (by reason) in the metrics.
func (h *Handler) countOrder(err error) {
	switch code := petstore.ErrorCode(err); {
	case err == nil:
		h.metrics.ordersPlaced.Inc()
	case code != petstore.EInternal:
		h.metrics.ordersRefused.WithLabelValues(code).Inc()
	}
}

// orderHash identifies the body of an order request by its meaning, so that the same
// order sent with other white space or key order counts as the same body.
func orderHash(o petstore.NewOrder) []byte {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, o.PetID, 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(o.Quantity), 10)
	b = append(b, '|')
	if o.ShipDate != nil {
		b = o.ShipDate.AppendFormat(b, time.RFC3339Nano)
	}
	sum := sha256.Sum256(b)
	return sum[:]
}

// owner scopes order lookups: a customer sees only its own orders.
func owner(p petstore.Principal) int64 {
	if p.IsAdmin() {
		return 0
	}
	return p.AccountID
}

func (h *Handler) ListOrders(ctx context.Context, params oas.ListOrdersParams) (oas.ListOrdersRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	f := petstore.OrderFilter{AccountID: owner(principal(ctx)), Status: petstore.OrderStatus(params.Status.Or("")),
		Oldest: params.Sort.Or(oas.ListOrdersSortNewest) == oas.ListOrdersSortOldest}
	if id, ok := params.AccountId.Get(); ok {
		if f.AccountID != 0 && id != f.AccountID {
			// A customer may only name itself; other accounts' orders are not revealed.
			return &oas.ListOrdersOKHeaders{Response: []oas.Order{}}, nil
		}
		f.AccountID = id
	}
	if c, ok := params.Complete.Get(); ok {
		// complete is the older filter: true is completed, false the orders still to
		// fulfil (placed), as before cancelled orders were kept. With status, both
		// must agree.
		s := petstore.Placed
		if c {
			s = petstore.Completed
		}
		if f.Status != "" && f.Status != s {
			return &oas.ListOrdersOKHeaders{Response: []oas.Order{}}, nil
		}
		f.Status = s
	}
	for _, b := range []struct {
		field string
		in    oas.OptDateTime
		out   **time.Time
	}{{"createdAfter", params.CreatedAfter, &f.CreatedAfter}, {"createdBefore", params.CreatedBefore, &f.CreatedBefore}} {
		if t, ok := b.in.Get(); ok {
			if err := petstore.CheckInstant(b.field, t); err != nil {
				return nil, err
			}
			*b.out = optTime(b.in) // to the second, as every date a request sends
		}
	}
	orders, err := h.store.Orders(ctx, f, listPage(page))
	if err != nil {
		return nil, err
	}
	filters := func() url.Values {
		q := url.Values{}
		if id, ok := params.AccountId.Get(); ok {
			q.Set("accountId", strconv.FormatInt(id, 10))
		}
		if s, ok := params.Status.Get(); ok {
			q.Set("status", string(s))
		}
		if c, ok := params.Complete.Get(); ok {
			q.Set("complete", strconv.FormatBool(c))
		}
		if t := f.CreatedAfter; t != nil {
			q.Set("createdAfter", t.Format(time.RFC3339Nano))
		}
		if t := f.CreatedBefore; t != nil {
			q.Set("createdBefore", t.Format(time.RFC3339Nano))
		}
		if f.Oldest {
			q.Set("sort", string(oas.ListOrdersSortOldest))
		}
		return q
	}
	orders, link := nextLink(orders, page, "/store/orders", filters, func(o petstore.Order) int64 { return o.ID })
	return &oas.ListOrdersOKHeaders{Link: link, Response: mapSlice(orders, h.toOrder)}, nil
}

func (h *Handler) GetOrder(ctx context.Context, params oas.GetOrderParams) (oas.GetOrderRes, error) {
	o, err := h.store.Order(ctx, params.OrderId, owner(principal(ctx)))
	if err != nil {
		return nil, err
	}
	out := h.toOrder(o)
	return &out, nil
}

func (h *Handler) CancelOrder(ctx context.Context, params oas.CancelOrderParams) (oas.CancelOrderRes, error) {
	if err := h.store.CancelOrder(ctx, params.OrderId, owner(principal(ctx))); err != nil {
		return nil, err
	}
	return &oas.CancelOrderNoContent{}, nil
}

func (h *Handler) UpdateOrder(ctx context.Context, req *oas.OrderUpdate, params oas.UpdateOrderParams) (oas.UpdateOrderRes, error) {
	u := petstore.OrderUpdate{ShipDate: optTime(req.ShipDate)}
	if c, ok := req.Complete.Get(); ok {
		u.Complete = &c
	}
	o, err := h.store.UpdateOrder(ctx, params.OrderId, u)
	if err != nil {
		return nil, err
	}
	out := h.toOrder(o)
	return &out, nil
}

// GetSalesReport answers the sales of a range of days: the last 30 up to today (UTC)
// unless told.
func (h *Handler) GetSalesReport(ctx context.Context, params oas.GetSalesReportParams) (oas.GetSalesReportRes, error) {
	q := petstore.SalesQuery{GroupBy: petstore.SalesGrouping(params.GroupBy.Or(oas.GetSalesReportGroupByDay)), Limit: int(params.Limit.Or(100))}
	q.To = params.To.Or(h.now().UTC())
	q.From = params.From.Or(q.To.AddDate(0, 0, -29))
	if err := q.Validate(); err != nil {
		return nil, err
	}
	r, err := h.store.SalesReport(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &oas.SalesReport{From: r.Query.From, To: r.Query.To, GroupBy: string(q.GroupBy),
		Currency: h.currency, Totals: toFigures(r.Totals), Groups: make([]oas.SalesGroup, len(r.Groups))}
	for i, g := range r.Groups {
		f := toFigures(g.SalesFigures)
		og := oas.SalesGroup{Orders: f.Orders, Units: f.Units, Revenue: f.Revenue,
			CancelledOrders: f.CancelledOrders, CancelledUnits: f.CancelledUnits, CancelledRevenue: f.CancelledRevenue}
		switch q.GroupBy {
		case petstore.ByPet:
			og.PetId = oas.NewOptInt64(g.PetID)
			if g.PetName != "" {
				og.PetName = oas.NewOptString(g.PetName)
			}
		case petstore.ByCategory:
			if g.CategoryID != 0 {
				og.CategoryId = oas.NewOptInt64(g.CategoryID)
			}
			if g.CategoryName != "" {
				og.CategoryName = oas.NewOptString(g.CategoryName)
			}
		default:
			og.Day = oas.NewOptDate(g.Day)
		}
		out.Groups[i] = og
	}
	return out, nil
}

func toFigures(f petstore.SalesFigures) oas.SalesFigures {
	return oas.SalesFigures{Orders: f.Orders, Units: f.Units, Revenue: f.Revenue,
		CancelledOrders: f.CancelledOrders, CancelledUnits: f.CancelledUnits, CancelledRevenue: f.CancelledRevenue}
}
