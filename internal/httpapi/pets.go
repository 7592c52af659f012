package httpapi

import (
	"context"
	"net/url"
	"strconv"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

func (h *Handler) ListPets(ctx context.Context, params oas.ListPetsParams) (oas.ListPetsRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	f := petstore.PetFilter{
		Status:     petstore.PetStatus(params.Status.Or("")),
		CategoryID: params.CategoryId.Or(0),
		IDs:        params.Ids,
		Name:       params.Name.Or(""),
		Tags:       params.Tag,
	}
	page = batchPage(page, f.IDs, params.Limit)
	pets, err := h.store.Pets(ctx, f, listPage(page))
	if err != nil {
		return nil, err
	}
	pets, link := nextLink(pets, page, "/pets", func() url.Values { return petQuery(f) }, func(p petstore.Pet) int64 { return p.ID })
	return &oas.PetsHeaders{Link: link, Response: mapSlice(pets, h.toPet)}, nil
}

// petQuery is the query of a pet filter, for next links.
func petQuery(f petstore.PetFilter) url.Values {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	if f.CategoryID != 0 {
		q.Set("categoryId", strconv.FormatInt(f.CategoryID, 10))
	}
	setIDs(q, f.IDs)
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	for _, t := range f.Tags {
		q.Add("tag", t)
	}
	return q
}

// newPetFields reads a NewPet; the store validates it (and trims the name and tags).
func newPetFields(req *oas.NewPet) petstore.PetFields {
	return petstore.PetFields{Name: req.Name, CategoryID: req.CategoryId, Status: petstore.PetStatus(req.Status.Or(oas.NewPetStatusAvailable)),
		Price: optPrice(req.Price, nil), Description: req.Description.Or(""), Tags: req.Tags}
}

// optPrice reads an optional, nullable price: null is no price, and absent is
// keep (what the pet has, nil for a new one).
func optPrice(o oas.OptNilInt64, keep *int64) *int64 {
	switch {
	case !o.IsSet():
		return keep
	case o.IsNull():
		return nil
	}
	v := o.Value
	return &v
}

func (h *Handler) CreatePet(ctx context.Context, req *oas.NewPet) (oas.CreatePetRes, error) {
	p, err := h.store.CreatePet(ctx, newPetFields(req))
	if err != nil {
		return nil, err
	}
	return &oas.PetHeaders{Location: apiPrefix + "/pets/" + strconv.FormatInt(p.ID, 10), Response: h.toPet(p)}, nil
}

func (h *Handler) GetPetById(ctx context.Context, params oas.GetPetByIdParams) (oas.GetPetByIdRes, error) {
	// The deprecation headers and the 410 after the sunset come from the middleware,
	// which sees every response of this operation, errors included.
	p, err := h.store.Pet(ctx, params.PetId)
	if err != nil {
		return nil, err
	}
	pet := h.toPet(p)
	return &pet, nil
}

func (h *Handler) ReplacePet(ctx context.Context, req *oas.NewPet, params oas.ReplacePetParams) (oas.ReplacePetRes, error) {
	f := newPetFields(req)
	p, err := h.store.UpdatePet(ctx, params.PetId, func(cur petstore.PetFields) (petstore.PetFields, error) {
		// A client that predates prices, descriptions or tags keeps the pet's.
		f.Price = optPrice(req.Price, cur.Price)
		if !req.Description.IsSet() {
			f.Description = cur.Description
		}
		if req.Tags == nil {
			f.Tags = cur.Tags
		}
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	out := h.toPet(p)
	return &out, nil
}

func (h *Handler) UpdatePet(ctx context.Context, req oas.UpdatePetReq, params oas.UpdatePetParams) (oas.UpdatePetRes, error) {
	var patch oas.PetPatch
	switch r := req.(type) {
	case *oas.UpdatePetApplicationJSON:
		patch = oas.PetPatch(*r)
	case *oas.UpdatePetApplicationMergePatchJSON:
		patch = oas.PetPatch(*r)
	}
	p, err := h.store.UpdatePet(ctx, params.PetId, func(f petstore.PetFields) (petstore.PetFields, error) {
		if v, ok := patch.Name.Get(); ok {
			f.Name = v
		}
		if v, ok := patch.CategoryId.Get(); ok {
			f.CategoryID = v
		}
		if v, ok := patch.Status.Get(); ok {
			f.Status = petstore.PetStatus(v)
		}
		f.Price = optPrice(patch.Price, f.Price)
		if patch.Description.IsSet() {
			f.Description = patch.Description.Or("") // null removes it, as "" does
		}
		if patch.Tags.IsSet() {
			f.Tags = patch.Tags.Or([]string{}) // null removes them, as [] does
		}
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	out := h.toPet(p)
	return &out, nil
}

func (h *Handler) DeletePet(ctx context.Context, params oas.DeletePetParams) (oas.DeletePetRes, error) {
	// The photos to remove once the pet is gone: read first, since the pet's row
	// goes with it. One added in between is left to the sweep.
	var photos []petstore.Photo
	if h.photos != nil {
		if p, err := h.store.Pet(ctx, params.PetId); err == nil {
			photos = p.Photos
		}
	}
	if err := h.store.DeletePet(ctx, params.PetId); err != nil {
		return nil, err
	}
	for _, p := range photos {
		h.photos.remove(ctx, p.ID)
	}
	return &oas.DeletePetNoContent{}, nil
}
