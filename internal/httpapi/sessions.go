package httpapi

import (
	"context"

	ht "github.com/ogen-go/ogen/http"

	"github.com/acme-pets/petstore/internal/oas"
)

// CreateSession signs a person in with email and password (issue 33; being built).
func (h *Handler) CreateSession(ctx context.Context, req *oas.NewSession) (oas.CreateSessionRes, error) {
	return nil, ht.ErrNotImplemented
}

// CreateInvitation invites a person to an account (issue 33; being built).
func (h *Handler) CreateInvitation(ctx context.Context, req *oas.NewInvitation) (oas.CreateInvitationRes, error) {
	return nil, ht.ErrNotImplemented
}

// AcceptInvitation sets an invited account's password (issue 33; being built).
func (h *Handler) AcceptInvitation(ctx context.Context, req *oas.InvitationAcceptance) (oas.AcceptInvitationRes, error) {
	return nil, ht.ErrNotImplemented
}

// RequestPasswordReset mails a reset link (issue 33; being built).
func (h *Handler) RequestPasswordReset(ctx context.Context, req *oas.PasswordResetRequest) (oas.RequestPasswordResetRes, error) {
	return nil, ht.ErrNotImplemented
}

// ResetPassword sets a new password with a reset token (issue 33; being built).
func (h *Handler) ResetPassword(ctx context.Context, req *oas.PasswordResetConfirmation) (oas.ResetPasswordRes, error) {
	return nil, ht.ErrNotImplemented
}
