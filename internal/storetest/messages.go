package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testMessages(t *testing.T, open Opener) {
	newMessage := func(account int64, id string) petstore.Message {
		return petstore.Message{
			ID:        id,
			AccountID: account,
			Text:      "Hello, pets! ünïcödé",
			Status:    petstore.MessageQueued,
			CreatedAt: inZone(microsecond(time.Now()), 2),
		}
	}

	t.Run("a message reads back as it was stored, in UTC", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		m := newMessage(a.ID, "msg_1")
		must(t, f.s.CreateMessage(f.ctx, m))
		got, err := f.s.Message(f.ctx, a.ID, "msg_1")
		must(t, err)
		if got.ID != m.ID || got.AccountID != a.ID || got.Text != m.Text || got.Status != m.Status || !got.CreatedAt.Equal(m.CreatedAt) {
			t.Errorf("message = %+v, want %+v", got, m)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("createdAt is in %v, want UTC", got.CreatedAt.Location())
		}
	})

	t.Run("another account's message is not found", func(t *testing.T) {
		f := setup(t, open)
		a, b := f.account(petstore.Customer), f.account(petstore.Customer)
		must(t, f.s.CreateMessage(f.ctx, newMessage(a.ID, "msg_1")))
		_, err := f.s.Message(f.ctx, b.ID, "msg_1")
		wantCode(t, err, petstore.ENotFound)
	})

	t.Run("an unknown message is not found", func(t *testing.T) {
		f := setup(t, open)
		_, err := f.s.Message(f.ctx, f.account(petstore.Customer).ID, "msg_404")
		wantCode(t, err, petstore.ENotFound)
	})

	t.Run("text the policy refuses is refused, and nothing is stored", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		for i, text := range []string{"a\x00b", "a\x1b[31mb", "a\u202eb", "a\u0085b", ""} {
			m := newMessage(a.ID, fmt.Sprint("msg_", i))
			m.Text = text
			wantCode(t, f.s.CreateMessage(f.ctx, m), petstore.EValidationFailed)
			_, err := f.s.Message(f.ctx, a.ID, m.ID)
			wantCode(t, err, petstore.ENotFound)
		}
		m := newMessage(a.ID, "msg_lines")
		m.Text = "line one\r\nline two\n\tindented"
		must(t, f.s.CreateMessage(f.ctx, m))
		got, err := f.s.Message(f.ctx, a.ID, m.ID)
		must(t, err)
		if got.Text != m.Text {
			t.Errorf("text = %q, want %q as sent", got.Text, m.Text)
		}
	})

	t.Run("a message id already used is a conflict", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		must(t, f.s.CreateMessage(f.ctx, newMessage(a.ID, "msg_1")))
		wantCode(t, f.s.CreateMessage(f.ctx, newMessage(a.ID, "msg_1")), petstore.EConflict)
	})
}
