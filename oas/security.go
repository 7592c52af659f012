package oas

// This file is written by hand (ogen -clean removes only oas_*_gen.go files): ready-made
// credentials for the generated Client.

import (
	"context"

	"github.com/ogen-go/ogen/ogenerrors"
)

// APIKey is a SecuritySource that sends an API key as "Authorization: Bearer <key>":
// pass it to NewClient.
type APIKey string

// BearerAuth returns the key.
func (k APIKey) BearerAuth(context.Context, OperationName) (BearerAuth, error) {
	return BearerAuth{Token: string(k)}, nil
}

// BasicAuth skips HTTP Basic: with a key, no password is needed.
func (k APIKey) BasicAuth(context.Context, OperationName) (BasicAuth, error) {
	return BasicAuth{}, ogenerrors.ErrSkipClientSecurity
}

// Password is a SecuritySource that sends an account's email and password with HTTP
// Basic, which only the /api-keys operations accept: use it to make the first key.
type Password struct{ Email, Password string }

// BasicAuth returns the email and password.
func (p Password) BasicAuth(context.Context, OperationName) (BasicAuth, error) {
	return BasicAuth{Username: p.Email, Password: p.Password}, nil
}

// BearerAuth skips the Bearer scheme.
func (p Password) BearerAuth(context.Context, OperationName) (BearerAuth, error) {
	return BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}
