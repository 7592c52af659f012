package petstore

import (
	"context"
	"encoding/base64"
	"iter"
	"net/http"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// CreateAccount opens a customer account; it needs no credentials. Next, make an API
// key with WithPassword(email, password).CreateAPIKey.
func (c *Client) CreateAccount(ctx context.Context, account NewAccount, opts ...CallOption) (*Account, error) {
	ctx = withCall(ctx, "createAccount", opts)
	v, err := decode[api.Account](c.api.CreateAccount(ctx, api.NewAccount{Email: account.Email, Password: account.Password}))
	return convert(v, err, accountFrom)
}

// GetCurrentAccount returns the account of the client's API key: its email and its
// role, and in Key what the key may do (its scopes) and until when. Call it to check a
// key (a missing, unknown or revoked one is an Error with status 401), to learn
// whether it is an admin's, and to offer only the operations its scopes allow.
func (c *Client) GetCurrentAccount(ctx context.Context, opts ...CallOption) (*Account, error) {
	ctx = withCall(ctx, "getCurrentAccount", opts)
	v, err := decode[api.CurrentAccount](c.api.GetCurrentAccount(ctx))
	return convert(v, err, currentAccountFrom)
}

// ListAccounts returns the accounts that pass the filters of opts (nil for every
// account), in id order (admins): store staff look up who is behind an Order's
// AccountID. An email is personal data: a key needs ScopeAccountsRead.
func (c *Client) ListAccounts(ctx context.Context, opts *ListAccountsOptions, callOpts ...CallOption) iter.Seq2[*Account, error] {
	return items(c.ListAccountsPages(ctx, opts, callOpts...))
}

// ListAccountsPages returns the accounts of ListAccounts a page at a time; each page's
// Next is the Cursor that goes on from there.
func (c *Client) ListAccountsPages(ctx context.Context, opts *ListAccountsOptions, callOpts ...CallOption) iter.Seq2[*Page[*Account], error] {
	var params api.ListAccountsParams
	if opts != nil {
		params = api.ListAccountsParams{
			Ids:    optionalIDs(opts.IDs),
			Role:   optional(api.Role(opts.Role)),
			Limit:  optional(int32Of(opts.Limit)),
			Cursor: optional(opts.Cursor),
		}
	}
	return pages(ctx, c, "listAccounts", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListAccounts(ctx, &params)
	}, accountFrom)
}

// UpdateAccount changes an account's role or disables it (admins). A disabled
// account's keys stop at once on the server that answered and within a second on the
// others; its password no longer signs in. The last enabled admin is neither demoted
// nor disabled: an *Error with CodeLastAdmin, and nothing changes.
func (c *Client) UpdateAccount(ctx context.Context, id int64, patch AccountPatch, opts ...CallOption) (*Account, error) {
	ctx = withCall(ctx, "updateAccount", opts)
	v, err := decode[api.Account](c.api.UpdateAccountWithApplicationMergePatchPlusJSONBody(ctx, id, patch.body()))
	return convert(v, err, accountFrom)
}

// SendMessage sends a message: the getting-started call, which proves that a key works.
func (c *Client) SendMessage(ctx context.Context, message NewMessage, opts ...CallOption) (*Message, error) {
	ctx = withCall(ctx, "sendMessage", opts)
	v, err := decode[api.Message](c.api.SendMessage(ctx, api.NewMessage{Message: message.Message}))
	return convert(v, err, messageFrom)
}

// GetMessage returns one of the account's messages.
func (c *Client) GetMessage(ctx context.Context, id string, opts ...CallOption) (*Message, error) {
	ctx = withCall(ctx, "getMessage", opts)
	v, err := decode[api.Message](c.api.GetMessage(ctx, id))
	return convert(v, err, messageFrom)
}

// CreateAPIKey makes another API key of the account. The answer holds the key itself,
// which the service never shows again.
func (c *Client) CreateAPIKey(ctx context.Context, key NewAPIKey, opts ...CallOption) (*CreatedAPIKey, error) {
	ctx = withCall(ctx, "createApiKey", opts)
	v, err := decode[api.CreatedAPIKey](c.api.CreateAPIKey(ctx, key.body()))
	return convert(v, err, createdAPIKeyFrom)
}

// ListAPIKeys returns the account's keys that are not revoked, without their secrets;
// opts may be nil.
func (c *Client) ListAPIKeys(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*APIKey, error] {
	return items(c.ListAPIKeysPages(ctx, opts, callOpts...))
}

// ListAPIKeysPages returns the account's keys a page at a time.
func (c *Client) ListAPIKeysPages(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Page[*APIKey], error] {
	var params api.ListAPIKeysParams
	params.Limit, params.Cursor = opts.page()
	return pages(ctx, c, "listApiKeys", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListAPIKeys(ctx, &params)
	}, apiKeyFrom)
}

// RevokeAPIKey revokes one of the account's keys; revoking the key that makes the call
// is allowed. The key answers 401 from its next use on.
func (c *Client) RevokeAPIKey(ctx context.Context, id int64, opts ...CallOption) error {
	ctx = withCall(ctx, "revokeApiKey", opts)
	return noContent(c.api.RevokeAPIKey(ctx, id))
}

// WithPassword returns the calls that accept an account's email and password (HTTP Basic)
// instead of an API key: making, listing and revoking keys. It shares c's settings.
func (c *Client) WithPassword(email, password string) *PasswordClient {
	cp := *c
	cp.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+password))
	cp.bind()
	return &PasswordClient{c: &cp}
}

// PasswordClient makes the calls that accept an account's email and password (HTTP
// Basic) instead of an API key, the key calls; the service takes a password nowhere
// else. Get one from Client.WithPassword:
//
//	created, err := client.WithPassword(email, password).CreateAPIKey(ctx, petstore.NewAPIKey{Name: "laptop"})
type PasswordClient struct {
	c *Client // a copy of the Client that sends the password
}

// CreateAPIKey makes an API key; see Client.CreateAPIKey.
func (p *PasswordClient) CreateAPIKey(ctx context.Context, key NewAPIKey, opts ...CallOption) (*CreatedAPIKey, error) {
	return p.c.CreateAPIKey(ctx, key, opts...)
}

// ListAPIKeys returns the account's keys; see Client.ListAPIKeys.
func (p *PasswordClient) ListAPIKeys(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*APIKey, error] {
	return p.c.ListAPIKeys(ctx, opts, callOpts...)
}

// ListAPIKeysPages returns the account's keys a page at a time; see
// Client.ListAPIKeysPages.
func (p *PasswordClient) ListAPIKeysPages(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Page[*APIKey], error] {
	return p.c.ListAPIKeysPages(ctx, opts, callOpts...)
}

// RevokeAPIKey revokes one of the account's keys; see Client.RevokeAPIKey.
func (p *PasswordClient) RevokeAPIKey(ctx context.Context, id int64, opts ...CallOption) error {
	return p.c.RevokeAPIKey(ctx, id, opts...)
}
