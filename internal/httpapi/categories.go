package httpapi

import (
	"context"
	"strconv"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

func (h *Handler) ListCategories(ctx context.Context, params oas.ListCategoriesParams) (oas.ListCategoriesRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	cs, err := h.store.Categories(ctx, listPage(page))
	if err != nil {
		return nil, err
	}
	cs, link := nextLink(cs, page, "/categories", nil, func(c petstore.Category) int64 { return c.ID })
	return &oas.ListCategoriesOKHeaders{Link: link, Response: mapSlice(cs, toCategory)}, nil
}

func (h *Handler) CreateCategory(ctx context.Context, req *oas.NewCategory) (oas.CreateCategoryRes, error) {
	c, err := h.store.CreateCategory(ctx, petstore.Category{Name: req.Name, Description: req.Description.Or("")})
	if err != nil {
		return nil, err
	}
	return &oas.CategoryHeaders{Location: apiPrefix + "/categories/" + strconv.FormatInt(c.ID, 10), Response: toCategory(c)}, nil
}

func (h *Handler) GetCategory(ctx context.Context, params oas.GetCategoryParams) (oas.GetCategoryRes, error) {
	c, err := h.store.Category(ctx, params.CategoryId)
	if err != nil {
		return nil, err
	}
	out := toCategory(c)
	return &out, nil
}

func (h *Handler) ReplaceCategory(ctx context.Context, req *oas.NewCategory, params oas.ReplaceCategoryParams) (oas.ReplaceCategoryRes, error) {
	c, err := h.store.ReplaceCategory(ctx, petstore.Category{ID: params.CategoryId, Name: req.Name, Description: req.Description.Or("")})
	if err != nil {
		return nil, err
	}
	out := toCategory(c)
	return &out, nil
}

func (h *Handler) DeleteCategory(ctx context.Context, params oas.DeleteCategoryParams) (oas.DeleteCategoryRes, error) {
	if err := h.store.DeleteCategory(ctx, params.CategoryId); err != nil {
		return nil, err
	}
	return &oas.DeleteCategoryNoContent{}, nil
}
