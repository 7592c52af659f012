package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-faster/jx"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/oas"
)

func (h *Handler) ListInventory(ctx context.Context, params oas.ListInventoryParams) (oas.ListInventoryRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	status := petstore.PetStatus(params.Status.Or(""))
	items, err := h.store.Inventories(ctx, status, listPage(page))
	if err != nil {
		return nil, err
	}
	filters := func() url.Values {
		if status == "" {
			return url.Values{}
		}
		return url.Values{"status": {string(status)}}
	}
	items, link := nextLink(items, page, "/store/inventory", filters, func(i petstore.InventoryItem) int64 { return i.PetID })
	return &oas.ListInventoryOKHeaders{Link: link, Response: mapSlice(items, toInventory)}, nil
}

func (h *Handler) GetInventory(ctx context.Context, params oas.GetInventoryParams) (oas.GetInventoryRes, error) {
	item, err := h.store.Inventory(ctx, params.PetId)
	if err != nil {
		return nil, err
	}
	out := toInventory(item)
	return &out, nil
}

func (h *Handler) SetInventory(ctx context.Context, req *oas.InventoryUpdate, params oas.SetInventoryParams) (oas.SetInventoryRes, error) {
	item, err := h.store.SetInventory(ctx, params.PetId, req.Quantity)
	if err != nil {
		return nil, err
	}
	out := toInventory(item)
	return &out, nil
}

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

func (h *Handler) PlaceOrder(ctx context.Context, req *oas.NewOrder, params oas.PlaceOrderParams) (oas.PlaceOrderRes, error) {
	p := principal(ctx)
	o := petstore.NewOrder{AccountID: p.AccountID, PetID: req.PetId, Quantity: req.Quantity, ShipDate: optTime(req.ShipDate)}
	key, ok := params.IdempotencyKey.Get()
	if !ok {
		order, err := h.store.PlaceOrder(ctx, o)
		h.countOrder(err)
		if err != nil {
			return nil, err
		}
		return placed(order), nil
	}

	k := petstore.IdempotencyKey{AccountID: p.AccountID, Key: key, RequestHash: orderHash(o)}
	stored, replay, err := h.store.ClaimIdempotencyKey(ctx, k, h.now(), IdempotencyTTL)
	if err != nil {
		return nil, err
	}
	if replay {
		return replayed(stored)
	}
	o.Idempotency = &k
	o.Response = func(order petstore.Order) (petstore.StoredResponse, error) {
		r := placed(order)
		var enc jx.Encoder
		r.Response.Encode(&enc)
		return petstore.StoredResponse{Status: http.StatusCreated, Location: r.Location, Body: enc.Bytes()}, nil
	}
	order, err := h.store.PlaceOrder(ctx, o)
	h.countOrder(err)
	if err == nil {
		return placed(order), nil
	}
	// A refusal is the answer to this key, and a retry gets it again; anything else
	// releases the key so that a retry runs afresh.
	ctx = context.WithoutCancel(ctx)
	if r := toResponse(asError(err)); r.StatusCode < http.StatusInternalServerError {
		var enc jx.Encoder
		r.Response.Encode(&enc)
		if serr := h.store.SaveIdempotentResponse(ctx, k, petstore.StoredResponse{Status: r.StatusCode, Body: enc.Bytes()}); serr != nil {
			return nil, serr
		}
		return nil, err
	}
	if rerr := h.store.ReleaseIdempotencyKey(ctx, k); rerr != nil {
		h.log.ErrorContext(ctx, "release idempotency key", "err", rerr, "request_id", RequestID(ctx))
	}
	return nil, err
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

func placed(o petstore.Order) *oas.OrderHeaders {
	return &oas.OrderHeaders{Location: apiPrefix + "/store/orders/" + strconv.FormatInt(o.ID, 10), Response: toOrder(o)}
}

// replayed answers a request with the response stored for its Idempotency-Key.
func replayed(r petstore.StoredResponse) (oas.PlaceOrderRes, error) {
	if r.Status == http.StatusCreated {
		out := &oas.OrderHeaders{Location: r.Location}
		if err := out.Response.Decode(jx.DecodeBytes(r.Body)); err != nil {
			return nil, err
		}
		return out, nil
	}
	var body oas.Error
	if err := body.Decode(jx.DecodeBytes(r.Body)); err != nil {
		return nil, err
	}
	e := &petstore.Error{Code: body.Code, Message: body.Message}
	for _, d := range body.Details {
		e.Details = append(e.Details, petstore.Detail{Field: d.Field, Problem: d.Problem})
	}
	return nil, e
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

func asError(err error) *petstore.Error {
	var e *petstore.Error
	if errors.As(err, &e) {
		return e
	}
	return errInternal
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
	f := petstore.OrderFilter{AccountID: owner(principal(ctx))}
	if id, ok := params.AccountId.Get(); ok {
		if f.AccountID != 0 && id != f.AccountID {
			// A customer may only name itself; other accounts' orders are not revealed.
			return &oas.ListOrdersOKHeaders{Response: []oas.Order{}}, nil
		}
		f.AccountID = id
	}
	if c, ok := params.Complete.Get(); ok {
		f.Complete = &c
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
		if f.Complete != nil {
			q.Set("complete", strconv.FormatBool(*f.Complete))
		}
		return q
	}
	orders, link := nextLink(orders, page, "/store/orders", filters, func(o petstore.Order) int64 { return o.ID })
	return &oas.ListOrdersOKHeaders{Link: link, Response: mapSlice(orders, toOrder)}, nil
}

func (h *Handler) GetOrder(ctx context.Context, params oas.GetOrderParams) (oas.GetOrderRes, error) {
	o, err := h.store.Order(ctx, params.OrderId, owner(principal(ctx)))
	if err != nil {
		return nil, err
	}
	out := toOrder(o)
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
	out := toOrder(o)
	return &out, nil
}
