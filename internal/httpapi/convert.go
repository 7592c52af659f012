package httpapi

import (
	"net/url"
	"strconv"
	"time"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

func (h *Handler) toPet(p petstore.Pet) oas.Pet { return toPet(p, h.currency) }

// toPet shows a pet, its price (when it has one) in currency, the shop's.
func toPet(p petstore.Pet, currency string) oas.Pet {
	out := oas.Pet{ID: p.ID, Name: p.Name, CategoryId: p.CategoryID, Status: string(p.Status), Stock: int32(p.Stock), Tags: p.Tags}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	out.Photos = make([]oas.Photo, len(p.Photos))
	for i, ph := range p.Photos {
		out.Photos[i] = toPhoto(ph)
	}
	if p.Description != "" {
		out.Description = oas.NewOptString(p.Description)
	}
	if p.Price != nil {
		out.Price = oas.NewOptInt64(*p.Price)
		out.Currency = oas.NewOptString(currency)
	}
	return out
}

func toCategory(c petstore.Category) oas.Category {
	out := oas.Category{ID: c.ID, Name: c.Name}
	if c.Description != "" {
		out.Description = oas.NewOptString(c.Description)
	}
	return out
}

func toInventory(i petstore.InventoryItem) oas.InventoryItem {
	return oas.InventoryItem{PetId: i.PetID, Quantity: int32(i.Quantity), Status: string(i.Status)}
}

func (h *Handler) toOrder(o petstore.Order) oas.Order { return toOrder(o, h.currency) }

// toOrder shows an order with its whole life. Its amounts are in the currency it was
// placed in, the shop's (currency) for one that does not say (an event stored before
// orders kept it): a shop cannot change its currency once it has orders.
func toOrder(o petstore.Order, currency string) oas.Order {
	if o.Currency != "" {
		currency = o.Currency
	}
	out := oas.Order{ID: o.ID, PetId: o.PetID, Quantity: int32(o.Quantity), Complete: o.Complete, AccountId: o.AccountID,
		Status: string(o.Status), CreatedAt: o.CreatedAt.UTC(), CompletedAt: timeOpt(o.CompletedAt), CancelledAt: timeOpt(o.CancelledAt),
		ShipDate: timeOpt(o.ShipDate), Currency: currency}
	if o.UnitPrice != nil {
		out.UnitPrice = oas.NewOptInt64(*o.UnitPrice)
		out.Total = oas.NewOptInt64(*o.Total())
	}
	if o.PetName != "" {
		out.PetName = oas.NewOptString(o.PetName)
	}
	return out
}

func toAccount(a petstore.Account) oas.Account {
	return oas.Account{ID: a.ID, Email: a.Email, Role: oas.Role(a.Role), CreatedAt: a.CreatedAt.UTC(), Disabled: a.Disabled,
		PasswordSource: string(a.Password)}
}

func toMessage(m petstore.Message) oas.Message {
	return oas.Message{ID: m.ID, Message: m.Text, Status: string(m.Status), CreatedAt: m.CreatedAt.UTC()}
}

// optTime reads an optional date-time. Dates are kept to the second: the generated
// encoder writes whole seconds, so a finer date could never be read back and sent
// again as it is stored.
func optTime(o oas.OptDateTime) *time.Time {
	if t, ok := o.Get(); ok {
		t = t.UTC().Truncate(time.Second)
		return &t
	}
	return nil
}

// timeOpt is an optional date-time of an answer, in UTC.
func timeOpt(t *time.Time) oas.OptDateTime {
	if t == nil {
		return oas.OptDateTime{}
	}
	return oas.NewOptDateTime(t.UTC())
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// pageOf reads the pagination parameters; the generated server has checked the bounds
// of limit already.
func pageOf(limit oas.OptInt32, cursor oas.OptString) (petstore.Page, error) {
	after, err := petstore.DecodeCursor(cursor.Or(""))
	if err != nil {
		return petstore.Page{}, err
	}
	return petstore.Page{Limit: int(limit.Or(petstore.DefaultLimit)), After: after}, nil
}

// batchPage is the page of a list filtered by ids, the batch lookup of pets and of
// their stock: unless the request gave a limit, it holds every id asked for.
func batchPage(p petstore.Page, ids []int64, limit oas.OptInt32) petstore.Page {
	if len(ids) > 0 && !limit.Set {
		p.Limit = min(len(ids), petstore.MaxLimit)
	}
	return p
}

// setIDs puts an ids filter into the query of a next link, comma-separated (see
// explodeIDs); no ids put nothing.
func setIDs(q url.Values, ids []int64) {
	if len(ids) == 0 {
		return
	}
	b := make([]byte, 0, len(ids)*8)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	q.Set("ids", string(b))
}

// listPage asks the store for one item more than the page holds, to learn whether a
// next page exists without a second query.
func listPage(p petstore.Page) petstore.Page {
	p.Limit++
	return p
}

// nextLink trims items to the page size and returns the RFC 8288 next link when more
// items follow; filters (nil for none) gives the request's filters, which the link
// keeps. It is called only when there is a next page.
func nextLink[T any](items []T, p petstore.Page, path string, filters func() url.Values, id func(T) int64) ([]T, oas.OptString) {
	if len(items) <= p.Limit {
		return items, oas.OptString{}
	}
	items = items[:p.Limit]
	return items, linkAfter(p, path, filters, id(items[len(items)-1]))
}

// linkAfter is the RFC 8288 next link to the page of path that follows the item with
// id last, keeping the request's filters (nil for none) and page size.
func linkAfter(p petstore.Page, path string, filters func() url.Values, last int64) oas.OptString {
	query := url.Values{}
	if filters != nil {
		query = filters()
	}
	query.Set("limit", strconv.Itoa(p.Limit))
	query.Set("cursor", petstore.EncodeCursor(last))
	return oas.NewOptString("<" + apiPrefix + path + "?" + query.Encode() + `>; rel="next"`)
}
