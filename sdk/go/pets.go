package petstore

import (
	"bytes"
	"context"
	"iter"
	"net/http"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// ListPets returns every pet that passes the filters of opts (nil for none), in id
// order, fetching the pages as the loop goes:
//
//	for pet, err := range client.ListPets(ctx, nil) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(pet.Name)
//	}
func (c *Client) ListPets(ctx context.Context, opts *ListPetsOptions, callOpts ...CallOption) iter.Seq2[*Pet, error] {
	return items(c.ListPetsPages(ctx, opts, callOpts...))
}

// ListPetsPages returns the pets of ListPets a page at a time; each page's Next is
// the Cursor that goes on from there.
func (c *Client) ListPetsPages(ctx context.Context, opts *ListPetsOptions, callOpts ...CallOption) iter.Seq2[*Page[*Pet], error] {
	var params api.ListPetsParams
	if opts != nil {
		params = api.ListPetsParams{
			Status:     optional(api.PetStatus(opts.Status)),
			CategoryID: optional(opts.CategoryID),
			Ids:        optionalIDs(opts.IDs),
			Name:       optional(opts.Name),
			Limit:      optional(int32Of(opts.Limit)),
			Cursor:     optional(opts.Cursor),
		}
		if len(opts.Tags) > 0 {
			params.Tag = &opts.Tags
		}
	}
	return pages(ctx, c, "listPets", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListPets(ctx, &params)
	}, petFrom)
}

// CreatePet adds a pet (admins). Its stock is 0 until SetInventory.
func (c *Client) CreatePet(ctx context.Context, pet NewPet, opts ...CallOption) (*Pet, error) {
	ctx = withCall(ctx, "createPet", opts)
	p, err := decode[api.Pet](c.api.CreatePet(ctx, pet.body()))
	return convert(p, err, petFrom)
}

// GetPet returns one pet.
//
// Deprecated: the service retires this call (see Deprecation); use ListPets with
// ListPetsOptions{IDs: []int64{id}}.
func (c *Client) GetPet(ctx context.Context, id int64, opts ...CallOption) (*Pet, error) {
	ctx = withCall(ctx, "getPetById", opts)
	p, err := decode[api.Pet](c.api.GetPetByID(ctx, id))
	return convert(p, err, petFrom)
}

// ReplacePet replaces every field of a pet (admins), but a nil Price keeps the pet's
// price. A status change the store's rules forbid is an *Error with
// CodeInvalidTransition.
func (c *Client) ReplacePet(ctx context.Context, id int64, pet NewPet, opts ...CallOption) (*Pet, error) {
	ctx = withCall(ctx, "replacePet", opts)
	p, err := decode[api.Pet](c.api.ReplacePet(ctx, id, pet.body()))
	return convert(p, err, petFrom)
}

// UpdatePet changes the fields of a pet that patch sets (admins). A new price or name
// applies to orders placed from then on: an order keeps the price and name it was
// placed with.
func (c *Client) UpdatePet(ctx context.Context, id int64, patch PetPatch, opts ...CallOption) (*Pet, error) {
	ctx = withCall(ctx, "updatePet", opts)
	body, err := patch.json()
	if err != nil {
		return nil, err
	}
	p, err := decode[api.Pet](c.api.UpdatePetWithBody(ctx, id, "application/merge-patch+json", bytes.NewReader(body)))
	return convert(p, err, petFrom)
}

// DeletePet removes a pet (admins). A pet with incomplete orders is an *Error with
// CodeConflict. A pet that was ever ordered is archived rather than erased: it leaves
// the catalogue (GetPet and new orders answer CodeNotFound), while its orders keep
// its id and name.
func (c *Client) DeletePet(ctx context.Context, id int64, opts ...CallOption) error {
	ctx = withCall(ctx, "deletePet", opts)
	return noContent(c.api.DeletePet(ctx, id))
}

// ListCategories returns every category, in id order; opts may be nil.
func (c *Client) ListCategories(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Category, error] {
	return items(c.ListCategoriesPages(ctx, opts, callOpts...))
}

// ListCategoriesPages returns the categories a page at a time.
func (c *Client) ListCategoriesPages(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Page[*Category], error] {
	var params api.ListCategoriesParams
	params.Limit, params.Cursor = opts.page()
	return pages(ctx, c, "listCategories", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListCategories(ctx, &params)
	}, categoryFrom)
}

// CreateCategory adds a category (admins).
func (c *Client) CreateCategory(ctx context.Context, category NewCategory, opts ...CallOption) (*Category, error) {
	ctx = withCall(ctx, "createCategory", opts)
	v, err := decode[api.Category](c.api.CreateCategory(ctx, category.body()))
	return convert(v, err, categoryFrom)
}

// GetCategory returns one category.
func (c *Client) GetCategory(ctx context.Context, id int64, opts ...CallOption) (*Category, error) {
	ctx = withCall(ctx, "getCategory", opts)
	v, err := decode[api.Category](c.api.GetCategory(ctx, id))
	return convert(v, err, categoryFrom)
}

// ReplaceCategory replaces every field of a category (admins).
func (c *Client) ReplaceCategory(ctx context.Context, id int64, category NewCategory, opts ...CallOption) (*Category, error) {
	ctx = withCall(ctx, "replaceCategory", opts)
	v, err := decode[api.Category](c.api.ReplaceCategory(ctx, id, category.body()))
	return convert(v, err, categoryFrom)
}

// DeleteCategory removes a category (admins). A category that still has pets is an
// *Error with CodeConflict.
func (c *Client) DeleteCategory(ctx context.Context, id int64, opts ...CallOption) error {
	ctx = withCall(ctx, "deleteCategory", opts)
	return noContent(c.api.DeleteCategory(ctx, id))
}
