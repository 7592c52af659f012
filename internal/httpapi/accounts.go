package httpapi

import (
	"context"
	"encoding/base32"
	"net/url"
	"slices"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

func (h *Handler) CreateAccount(ctx context.Context, req *oas.NewAccount) (oas.CreateAccountRes, error) {
	email, err := petstore.SignUp{Email: req.Email, Password: req.Password}.Check()
	if err != nil {
		return nil, err
	}
	hash, err := h.passwords.Hash(ctx, req.Password)
	if err != nil {
		return nil, err
	}
	a, err := h.store.CreateAccount(ctx, email, hash, petstore.Customer)
	if err != nil {
		return nil, err
	}
	out := toAccount(a)
	return &out, nil
}

// GetCurrentAccount answers the account of the caller's key, read from the store: the
// principal holds only its id and role, and the role it holds may be up to a second
// older than the account's (the key cache). The key's part comes from the principal.
func (h *Handler) GetCurrentAccount(ctx context.Context) (oas.GetCurrentAccountRes, error) {
	p := principal(ctx)
	a, err := h.store.Account(ctx, p.AccountID)
	if petstore.ErrorCode(err) == petstore.ENotFound {
		// Accounts are never deleted; a key whose account is gone opens nothing.
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	out := toAccount(a)
	cur := oas.CurrentAccount{ID: out.ID, Email: out.Email, Role: out.Role, CreatedAt: out.CreatedAt, Disabled: out.Disabled}
	if p.KeyID != 0 {
		cur.Key = oas.NewOptCallingKey(h.callingKey(p, a.Role))
	}
	return &cur, nil
}

// callingKey is what p's key may do: the scopes its account's role allows (role, the
// account's as read now, not the principal's cached one) that the key has, sorted, so
// that a key made without scopes lists every scope of the role and none the role lost.
func (h *Handler) callingKey(p petstore.Principal, role petstore.Role) oas.CallingKey {
	scopes := []string{}
	for _, s := range h.keys.allowed[string(role)] {
		if p.HasScope(s) {
			scopes = append(scopes, s)
		}
	}
	slices.Sort(scopes)
	k := oas.CallingKey{ID: p.KeyID, Scopes: scopes}
	if !p.ExpiresAt.IsZero() {
		k.ExpiresAt = oas.NewOptDateTime(p.ExpiresAt.UTC())
	}
	return k
}

func (h *Handler) CreateApiKey(ctx context.Context, req *oas.NewApiKey) (oas.CreateApiKeyRes, error) {
	name, err := petstore.CleanName("name", req.Name)
	if err != nil {
		return nil, err
	}
	ask := petstore.KeyGrant{}
	if req.Scopes != nil {
		ask.Scopes = mapSlice(req.Scopes, func(s oas.Scope) string { return string(s) })
	}
	ask.ExpiresAt = optTime(req.ExpiresAt)
	maker := principal(ctx)
	grant, err := ask.Decide(maker, h.keys.allowed[string(maker.Role)], h.now(), h.keys.maxLifetime)
	if err != nil {
		return nil, err
	}
	key, prefix, hash := auth.NewKey()
	k, err := h.store.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: maker.AccountID, Name: name, Prefix: prefix, Hash: hash,
		Scopes: grant.Scopes, ExpiresAt: grant.ExpiresAt, By: maker.Actor()})
	if err != nil {
		return nil, err
	}
	out := createdKey(k, key)
	return &out, nil
}

func (h *Handler) ListApiKeys(ctx context.Context, params oas.ListApiKeysParams) (oas.ListApiKeysRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	keys, err := h.store.APIKeys(ctx, principal(ctx).AccountID, listPage(page))
	if err != nil {
		return nil, err
	}
	keys, link := nextLink(keys, page, "/api-keys", nil, func(k petstore.APIKey) int64 { return k.ID })
	return &oas.ListApiKeysOKHeaders{Link: link, Response: mapSlice(keys, func(k petstore.APIKey) oas.ApiKey {
		return oas.ApiKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt.UTC(),
			Scopes: k.Scopes, ExpiresAt: timeOpt(k.ExpiresAt), LastUsedAt: timeOpt(k.LastUsedAt)}
	})}, nil
}

func (h *Handler) RevokeApiKey(ctx context.Context, params oas.RevokeApiKeyParams) (oas.RevokeApiKeyRes, error) {
	by := principal(ctx)
	if err := h.store.RevokeAPIKey(ctx, by.AccountID, params.KeyId, by.Actor()); err != nil {
		return nil, err
	}
	h.auth.Forget(params.KeyId)
	return &oas.RevokeApiKeyNoContent{}, nil
}

var messageIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

func (h *Handler) ListAccounts(ctx context.Context, params oas.ListAccountsParams) (oas.ListAccountsRes, error) {
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	f := petstore.AccountFilter{IDs: params.Ids, Role: petstore.Role(params.Role.Or(""))}
	page = batchPage(page, f.IDs, params.Limit)
	accounts, err := h.store.Accounts(ctx, f, listPage(page))
	if err != nil {
		return nil, err
	}
	accounts, link := nextLink(accounts, page, "/accounts", func() url.Values {
		q := url.Values{}
		setIDs(q, f.IDs)
		if f.Role != "" {
			q.Set("role", string(f.Role))
		}
		return q
	}, func(a petstore.Account) int64 { return a.ID })
	return &oas.ListAccountsOKHeaders{Link: link, Response: mapSlice(accounts, toAccount)}, nil
}

// UpdateAccount changes an account's role or disables it, under the last-admin rule
// (the store's). The account's keys are dropped from this process's key cache, so that
// the change holds here from the next request; other processes read it within the
// cache's lifetime, as they do a revocation.
func (h *Handler) UpdateAccount(ctx context.Context, req oas.UpdateAccountReq, params oas.UpdateAccountParams) (oas.UpdateAccountRes, error) {
	var patch oas.AccountPatch
	switch r := req.(type) {
	case *oas.UpdateAccountApplicationJSON:
		patch = oas.AccountPatch(*r)
	case *oas.UpdateAccountApplicationMergePatchJSON:
		patch = oas.AccountPatch(*r)
	}
	var change petstore.AccountChange
	if v, ok := patch.Role.Get(); ok {
		r := petstore.Role(v)
		change.Role = &r
	}
	if v, ok := patch.Disabled.Get(); ok {
		change.Disabled = &v
	}
	a, err := h.store.UpdateAccount(ctx, params.AccountId, change)
	if err != nil {
		return nil, err
	}
	h.auth.ForgetAccount(a.ID)
	out := toAccount(a)
	return &out, nil
}
