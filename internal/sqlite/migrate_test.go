package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/acme-pets/petstore/internal/petstore"
)

// A database made before Idempotency-Keys held domain results (migration 4) keeps the
// answers of its keys: an upgraded server replays them as the old one would have.
func TestUpgradingKeepsTheAnswersOfIdempotencyKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path+"?"+pragmas)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, old, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', '2026-11-20T09:00:00.000000000Z')`,
		`INSERT INTO idempotency_keys (account_id, key, request_hash, status, location, body, created_at) VALUES
		 (1, 'placed', x'68', 201, '/v1/store/orders/7', CAST('{"id":7,"petId":3,"quantity":2,"shipDate":"2031-01-02T03:04:05Z","complete":false,"accountId":1,"createdAt":"2026-11-20T10:00:00Z"}' AS BLOB), '2026-11-20T09:59:59.900000000Z'),
		 (1, 'refused', x'68', 409, '', CAST('{"code":"insufficient_stock","message":"Only 1 in stock; 2 were ordered.","status":409}' AS BLOB), '2026-11-20T10:00:00.000000000Z'),
		 (1, 'invalid', x'68', 400, '', CAST('{"code":"validation_failed","message":"The request is not valid: quantity must be 1 to 100.","status":400,"details":[{"field":"quantity","problem":"must be 1 to 100"}]}' AS BLOB), '2026-11-20T10:00:00.000000000Z'),
		 (1, 'running', x'68', NULL, '', NULL, '2026-11-20T10:00:00.000000000Z')`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	db, err := OpenWith(ctx, path, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	pet, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetInventory(ctx, pet.ID, 5); err != nil {
		t.Fatal(err)
	}
	place := func(key string) (petstore.PlacedOrder, error) {
		return db.PlaceOrder(ctx, petstore.NewOrder{AccountID: 1, PetID: pet.ID, Quantity: 1,
			Idempotency: &petstore.IdempotencyKey{AccountID: 1, Key: key, RequestHash: []byte("h")}})
	}

	o, err := place("placed")
	ship := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	want := petstore.Order{ID: 7, PetID: 3, AccountID: 1, Quantity: 2, ShipDate: &ship, CreatedAt: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	if err != nil || !o.Replayed || o.Order.ID != want.ID || o.Order.PetID != want.PetID || o.Order.Quantity != want.Quantity ||
		o.Order.ShipDate == nil || !o.Order.ShipDate.Equal(ship) || !o.Order.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("placed key replays %+v, %v; want %+v", o, err, want)
	}
	o, err = place("refused")
	var pe *petstore.Error
	if !o.Replayed || !errors.As(err, &pe) || pe.Code != petstore.EInsufficientStock || pe.Message != "Only 1 in stock; 2 were ordered." {
		t.Errorf("refused key replays %+v, %v", o, err)
	}
	o, err = place("invalid")
	if !o.Replayed || !errors.As(err, &pe) || len(pe.Details) != 1 || pe.Details[0].Field != "quantity" {
		t.Errorf("invalid key replays %+v, %v", o, err)
	}
	o, err = place("running")
	if err != nil || o.Replayed {
		t.Errorf("an unanswered claim of the old schema: %+v, %v; want a new order", o, err)
	}
}
