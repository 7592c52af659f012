package httpapi

import (
	"context"
	"net/url"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

func (h *Handler) ListInventory(ctx context.Context, params oas.ListInventoryParams) (oas.ListInventoryRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	f := petstore.InventoryFilter{Status: petstore.PetStatus(params.Status.Or("")), IDs: params.Ids}
	page = batchPage(page, f.IDs, params.Limit)
	items, err := h.store.Inventories(ctx, f, listPage(page))
	if err != nil {
		return nil, err
	}
	filters := func() url.Values {
		q := url.Values{}
		if f.Status != "" {
			q.Set("status", string(f.Status))
		}
		setIDs(q, f.IDs)
		return q
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
	item, err := h.store.SetInventory(ctx, params.PetId, int(req.Quantity))
	if err != nil {
		return nil, err
	}
	out := toInventory(item)
	return &out, nil
}
