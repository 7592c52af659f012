// Package httpapi is the HTTP face of the service: it implements the interface
// generated from the OpenAPI document (package oas), authenticates callers, maps
// errors to the one error body, and assembles the routes and middleware.
package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/eventhub"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/ratelimit"
)

// Handler implements the generated oas.Handler: each method converts the request,
// calls the store, and converts the answer back.
type Handler struct {
	store     petstore.Store
	auth      *auth.Authenticator
	passwords auth.Passwords
	log       *slog.Logger
	now       func() time.Time
	depr      deprecation
	metrics   *metrics
	// failedLogins counts failed logins per account email (nil: no limit).
	failedLogins ratelimit.Limiter
	// orders follows whether orders commit, for /readyz.
	orders orderHealth
	// checkURL decides whether a URL may be an endpoint's (Config.CheckWebhookURL).
	checkURL func(string) error
	// keys is what new API keys may be granted.
	keys keyPolicy
	// currency is the shop's, which every amount is in (the store's, when the
	// handler was made).
	currency string
	// hub is the event streams' reader, streams their count per account, and
	// heartbeat the time between their heartbeats (stream.go).
	hub       *eventhub.Hub
	streams   *streams
	heartbeat time.Duration
	// publicURL starts the links of invitations and resets (Config.PublicURL).
	publicURL string
	// mailer sends them; nil when the server has no mail.
	mailer Mailer
	// resets runs the lookups and mails of reset requests after their answers.
	resets *background
	// photos keeps the files of photos; nil when the server has no media store.
	photos *photoFiles
	// readTimeout is Config.ReadTimeout, named in the 408 of an upload too slow.
	readTimeout time.Duration
}

var _ oas.Handler = (*Handler)(nil)

// NewError turns every error the generated server meets after routing (handler and
// security errors) into the error body.
func (h *Handler) NewError(ctx context.Context, err error) *oas.DefaultStatusCodeWithHeaders {
	return errorResponse(ctx, h.log, h.store.Unavailable, err)
}
