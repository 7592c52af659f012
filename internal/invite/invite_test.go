package invite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/invite"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// An invitation's link carries the one token whose hash the store keeps: redeemed,
// it gives the account the role invited to. The mail carries the same link.
func TestAnInvitationsLinkRedeemsItsToken(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "petstore.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	inv, link, err := invite.Create(ctx, st, "https://shop.example.com/", "clerk@example.com", petstore.Admin, now)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "https://shop.example.com/console/accept?token="
	token, ok := strings.CutPrefix(link, prefix)
	if !ok || !auth.TokenWellFormed(auth.InvitationPrefix, token) {
		t.Fatalf("link %q; want %s and an invitation token", link, prefix)
	}
	if want := now.Add(petstore.InvitationLifetime).UTC().Truncate(time.Second); !inv.ExpiresAt.Equal(want) || inv.Role != petstore.Admin {
		t.Errorf("invitation %+v; want role admin, expiring %v", inv, want)
	}
	m := invite.Mail(inv.Email, inv.Role, link, inv.ExpiresAt)
	if m.To != "clerk@example.com" || !strings.Contains(m.Text, link) || !strings.Contains(m.Text, "as admin") {
		t.Errorf("mail %+v", m)
	}
	a, err := st.Redeem(ctx, petstore.Redemption{Kind: petstore.TokenInvitation, Hash: auth.HashKey(token), PasswordHash: "not-a-real-hash"})
	if err != nil || a.Email != "clerk@example.com" || a.Role != petstore.Admin {
		t.Fatalf("redeeming the link's token: %+v, %v", a, err)
	}
}
