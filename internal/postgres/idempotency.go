package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// An Idempotency-Key is a row per (account, key) holding the hash of the request it
// was first used with and that request's result: the order as placed (order_id and
// the order's fields) or the refusal (error_*). It is written in the transaction that
// places the order. Its primary key decides between processes: of two transactions
// writing one key, the second fails on it (keyTaken) and its batch runs again, to
// find the first one's result.

// keyConstraint is the primary key of idempotency_keys.
const keyConstraint = "idempotency_keys_key"

const (
	// qIdempotencyRecords reads the records of the keys named by two arrays, account
	// ids and keys. The order's price, pet name and category are its own, fixed when
	// it was placed, so they are read from it rather than copied onto the key.
	qIdempotencyRecords = `SELECT k.account_id, k.key, k.request_hash, k.created_at, k.order_id, k.pet_id, k.quantity,
		k.ship_date, k.error_code, k.error_message, k.error_details, o.unit_price, o.pet_name, coalesce(o.category_id, 0)
		FROM idempotency_keys k JOIN unnest($1::bigint[], $2::text[]) AS r(account_id, key)
		ON k.account_id = r.account_id AND k.key = r.key
		LEFT JOIN orders o ON o.id = k.order_id`
	// qDeleteExpiredKeys deletes the expired records that a batch uses afresh, each only
	// if it is still the one the batch saw.
	qDeleteExpiredKeys = `DELETE FROM idempotency_keys k
		USING unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS r(account_id, key, created_at)
		WHERE k.account_id = r.account_id AND k.key = r.key AND k.created_at = r.created_at`
	qInsertKeys = `INSERT INTO idempotency_keys
		(account_id, key, request_hash, created_at, order_id, pet_id, quantity, ship_date,
		 error_code, error_message, error_details)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[], $4::timestamptz[], $5::bigint[],
		 $6::bigint[], $7::integer[], $8::timestamptz[], $9::text[], $10::text[], $11::text[])`
)

// scanIdempotencyRecord reads a row of qIdempotencyRecords.
func scanIdempotencyRecord(rows pgx.Rows) (petstore.KeyRef, petstore.IdempotencyRecord, error) {
	var (
		ref                      petstore.KeyRef
		rec                      petstore.IdempotencyRecord
		orderID, petID           *int64
		quantity                 *int32
		ship                     *time.Time
		code, message, detailsJS *string
		price                    *int64
		petName                  *string
		category                 int64
	)
	if err := rows.Scan(&ref.AccountID, &ref.Key, &rec.RequestHash, &rec.CreatedAt, &orderID, &petID,
		&quantity, &ship, &code, &message, &detailsJS, &price, &petName, &category); err != nil {
		return ref, rec, fmt.Errorf("read idempotency key: %w", err)
	}
	if orderID != nil {
		o := petstore.Order{ID: *orderID, AccountID: ref.AccountID, Status: petstore.Placed, CreatedAt: rec.CreatedAt, ShipDate: ship,
			UnitPrice: price, CategoryID: category}
		if petName != nil {
			o.PetName = *petName
		}
		if petID != nil {
			o.PetID = *petID
		}
		if quantity != nil {
			o.Quantity = int(*quantity)
		}
		rec.Order = &o
		return ref, rec, nil
	}
	rec.Refusal = &petstore.Error{}
	if code != nil {
		rec.Refusal.Code = *code
	}
	if message != nil {
		rec.Refusal.Message = *message
	}
	if detailsJS != nil {
		if err := json.Unmarshal([]byte(*detailsJS), &rec.Refusal.Details); err != nil {
			return ref, rec, fmt.Errorf("read idempotency key: details: %w", err)
		}
	}
	return ref, rec, nil
}

// keyRows are the columns of the keys a batch records, for qInsertKeys.
type keyRows struct {
	accounts []int64
	keys     []string
	hashes   [][]byte
	created  []time.Time
	orders   []*int64
	pets     []*int64
	qty      []*int32
	ships    []*time.Time
	codes    []*string
	messages []*string
	details  []*string
}

func (k *keyRows) add(ref petstore.KeyRef, rec petstore.IdempotencyRecord) error {
	k.accounts = append(k.accounts, ref.AccountID)
	k.keys = append(k.keys, ref.Key)
	k.hashes = append(k.hashes, rec.RequestHash)
	k.created = append(k.created, rec.CreatedAt)
	if o := rec.Order; o != nil {
		q := int32(o.Quantity)
		k.orders = append(k.orders, &o.ID)
		k.pets = append(k.pets, &o.PetID)
		k.qty = append(k.qty, &q)
		k.ships = append(k.ships, o.ShipDate)
		k.codes, k.messages, k.details = append(k.codes, nil), append(k.messages, nil), append(k.details, nil)
		return nil
	}
	k.orders, k.pets, k.qty, k.ships = append(k.orders, nil), append(k.pets, nil), append(k.qty, nil), append(k.ships, nil)
	k.codes = append(k.codes, &rec.Refusal.Code)
	k.messages = append(k.messages, &rec.Refusal.Message)
	var details *string
	if len(rec.Refusal.Details) > 0 {
		b, err := json.Marshal(rec.Refusal.Details)
		if err != nil {
			return fmt.Errorf("record idempotency key: %w", err)
		}
		s := string(b)
		details = &s
	}
	k.details = append(k.details, details)
	return nil
}

func (k *keyRows) queue(b *pgx.Batch) {
	b.Queue(qInsertKeys, k.accounts, k.keys, k.hashes, k.created, k.orders, k.pets, k.qty, k.ships,
		k.codes, k.messages, k.details)
}

// PurgeIdempotencyKeys deletes keys first used before the given time and says how many.
func (db *DB) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int64, error) {
	n, err := db.purgeInChunks(ctx, `WITH k AS (
			DELETE FROM idempotency_keys WHERE (account_id, key) IN (
				SELECT account_id, key FROM idempotency_keys WHERE created_at < $1 LIMIT $2)
			RETURNING 1
		) SELECT count(*) FROM k`, before)
	if err != nil {
		return n, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return n, nil
}
