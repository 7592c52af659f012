package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// An Idempotency-Key is a row per (account, key) holding the hash of the request it
// was first used with and that request's result: the order as placed (order_id and
// the order's fields) or the refusal (error_*). It is written in the transaction that
// places the order.

const (
	// The order's price, pet name and category are its own, fixed when it was placed,
	// so they are read from it rather than copied onto the key.
	qIdempotencyRecord = `SELECT k.request_hash, k.created_at, k.order_id, k.pet_id, k.quantity, k.ship_date,
		k.error_code, k.error_message, k.error_details, o.unit_price, o.pet_name, coalesce(o.category_id, 0)
		FROM idempotency_keys AS k LEFT JOIN orders AS o ON o.id = k.order_id
		WHERE k.account_id = ? AND k.key = ?`
	qSaveIdempotencyRecord = `INSERT OR REPLACE INTO idempotency_keys
		(account_id, key, request_hash, created_at, order_id, pet_id, quantity, ship_date,
		 error_code, error_message, error_details)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// loadIdempotencyRecord reads the record of a key inside a write transaction; ok is
// false for a key never used.
func loadIdempotencyRecord(ctx context.Context, db *DB, tx *sql.Tx, ref petstore.KeyRef) (rec petstore.IdempotencyRecord, ok bool, err error) {
	s, err := db.txStmt(ctx, tx, qIdempotencyRecord)
	if err != nil {
		return rec, false, err
	}
	var (
		created                    string
		orderID, petID, quantity   sql.NullInt64
		ship                       sql.NullString
		code, message, detailsJSON sql.NullString
		price                      sql.NullInt64
		petName                    sql.NullString
		category                   int64
	)
	err = s.QueryRowContext(ctx, ref.AccountID, ref.Key).Scan(&rec.RequestHash, &created,
		&orderID, &petID, &quantity, &ship, &code, &message, &detailsJSON, &price, &petName, &category)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("load idempotency key: %w", err)
	}
	if rec.CreatedAt, err = parseTime(created); err != nil {
		return rec, false, err
	}
	if orderID.Valid {
		o := petstore.Order{ID: orderID.Int64, PetID: petID.Int64, AccountID: ref.AccountID, Quantity: int(quantity.Int64),
			Status: petstore.Placed, CreatedAt: rec.CreatedAt, UnitPrice: nullInt(price), PetName: petName.String,
			CategoryID: category, Currency: db.Currency()}
		if o.ShipDate, err = parseNullTime(ship); err != nil {
			return rec, false, err
		}
		rec.Order = &o
		return rec, true, nil
	}
	rec.Refusal = &petstore.Error{Code: code.String, Message: message.String}
	if detailsJSON.Valid {
		if err := json.Unmarshal([]byte(detailsJSON.String), &rec.Refusal.Details); err != nil {
			return rec, false, fmt.Errorf("load idempotency key: details: %w", err)
		}
	}
	return rec, true, nil
}

// saveIdempotencyRecord writes the record of a key, replacing an expired one.
func saveIdempotencyRecord(ctx context.Context, db *DB, tx *sql.Tx, ref petstore.KeyRef, rec petstore.IdempotencyRecord) error {
	s, err := db.txStmt(ctx, tx, qSaveIdempotencyRecord)
	if err != nil {
		return err
	}
	var (
		orderID, petID, quantity   sql.NullInt64
		ship                       sql.NullString
		code, message, detailsJSON sql.NullString
	)
	if o := rec.Order; o != nil {
		orderID = sql.NullInt64{Int64: o.ID, Valid: true}
		petID = sql.NullInt64{Int64: o.PetID, Valid: true}
		quantity = sql.NullInt64{Int64: int64(o.Quantity), Valid: true}
		ship = nullTime(o.ShipDate)
	} else {
		code = sql.NullString{String: rec.Refusal.Code, Valid: true}
		message = sql.NullString{String: rec.Refusal.Message, Valid: true}
		if len(rec.Refusal.Details) > 0 {
			b, err := json.Marshal(rec.Refusal.Details)
			if err != nil {
				return fmt.Errorf("save idempotency key: %w", err)
			}
			detailsJSON = sql.NullString{String: string(b), Valid: true}
		}
	}
	_, err = s.ExecContext(ctx, ref.AccountID, ref.Key, rec.RequestHash, formatTime(rec.CreatedAt),
		orderID, petID, quantity, ship, code, message, detailsJSON)
	if err != nil {
		return fmt.Errorf("save idempotency key: %w", err)
	}
	return nil
}

// PurgeIdempotencyKeys deletes keys first used before the given time and says how many.
func (db *DB) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int64, error) {
	n, err := db.purgeInChunks(ctx, `DELETE FROM idempotency_keys WHERE (account_id, key) IN (
		SELECT account_id, key FROM idempotency_keys WHERE created_at < ? LIMIT ?)`, formatTime(before))
	if err != nil {
		return n, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return n, nil
}
