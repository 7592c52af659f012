package httpapi

import (
	"context"
	"crypto/rand"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

func (h *Handler) SendMessage(ctx context.Context, req *oas.NewMessage) (oas.SendMessageRes, error) {
	var b [15]byte
	_, _ = rand.Read(b[:])
	m := petstore.Message{
		ID:        "msg_" + messageIDEncoding.EncodeToString(b[:]),
		AccountID: principal(ctx).AccountID,
		Text:      req.Message,
		Status:    petstore.MessageQueued,
		CreatedAt: h.now().UTC(),
	}
	if err := h.store.CreateMessage(ctx, m); err != nil {
		return nil, err
	}
	return &oas.MessageHeaders{Location: apiPrefix + "/messages/" + m.ID, Response: toMessage(m)}, nil
}

func (h *Handler) GetMessage(ctx context.Context, params oas.GetMessageParams) (oas.GetMessageRes, error) {
	if err := petstore.CheckText("messageId", params.MessageId); err != nil {
		return nil, err
	}
	m, err := h.store.Message(ctx, principal(ctx).AccountID, params.MessageId)
	if err != nil {
		return nil, err
	}
	out := toMessage(m)
	return &out, nil
}
