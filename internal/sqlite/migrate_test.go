package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/storetest"
)

// A database made before Idempotency-Keys held domain results (migration 4) keeps the
// answers of its keys: an upgraded server replays them as the old one would have.
func TestUpgradingKeepsTheAnswersOfIdempotencyKeys(t *testing.T) {
	ctx := context.Background()
	path := oldDatabase(t, 3,
		`INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', '2026-11-20T09:00:00.000000000Z')`,
		`INSERT INTO idempotency_keys (account_id, key, request_hash, status, location, body, created_at) VALUES
		 (1, 'placed', x'68', 201, '/v1/store/orders/7', CAST('{"id":7,"petId":3,"quantity":2,"shipDate":"2031-01-02T03:04:05Z","complete":false,"accountId":1,"createdAt":"2026-11-20T10:00:00Z"}' AS BLOB), '2026-11-20T09:59:59.900000000Z'),
		 (1, 'refused', x'68', 409, '', CAST('{"code":"insufficient_stock","message":"Only 1 in stock; 2 were ordered.","status":409}' AS BLOB), '2026-11-20T10:00:00.000000000Z'),
		 (1, 'invalid', x'68', 400, '', CAST('{"code":"validation_failed","message":"The request is not valid: quantity must be 1 to 100.","status":400,"details":[{"field":"quantity","problem":"must be 1 to 100"}]}' AS BLOB), '2026-11-20T10:00:00.000000000Z'),
		 (1, 'running', x'68', NULL, '', NULL, '2026-11-20T10:00:00.000000000Z')`,
	)

	db, err := OpenWith(ctx, path, Options{Now: func() time.Time { return storetest.OldKeysAt.Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckUpgradedKeys(t, db)
}

// An order stored with a ship date of year 10000, before ship dates were bounded, is
// readable again after the upgrade, without its ship date, and so is the list.
func TestUpgradingDropsUnreadableShipDates(t *testing.T) {
	ctx := context.Background()
	path := oldDatabase(t, 4,
		`INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', '2026-11-20T09:00:00.000000000Z')`,
		`INSERT INTO orders (id, pet_id, account_id, quantity, ship_date, created_at) VALUES
		 (1, 1, 1, 1, '10000-01-01T23:58:59.000000000Z', '2026-11-20T10:00:00.000000000Z'),
		 (2, 1, 1, 1, '2031-01-02T03:04:05.000000000Z', '2026-11-20T10:00:00.000000000Z')`,
	)
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.Orders(ctx, petstore.OrderFilter{Oldest: true}, petstore.Page{Limit: 10})
	if err != nil || len(list) != 2 {
		t.Fatalf("orders = %+v, %v", list, err)
	}
	if list[0].ShipDate != nil || list[1].ShipDate == nil {
		t.Errorf("ship dates after the upgrade: %v, %v; want none, then 2031", list[0].ShipDate, list[1].ShipDate)
	}
}

// oldDatabase makes a database file as a release that had the migrations up to
// version left it, holding what the statements write, and returns its path.
func oldDatabase(t *testing.T, version int64, statements ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path+"?"+pragmas)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, old, fsys, goose.WithGoMigrations(goMigrations()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	for _, q := range statements {
		if _, err := old.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// An account stored under a key of the old, one-round EmailKey is found again after
// the upgrade (migration 7).
func TestUpgradingRekeysEmails(t *testing.T) {
	path := oldDatabase(t, 6,
		`INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, '`+storetest.UnstableEmail+`', '`+storetest.UnstableEmailOldKey()+`', 'customer', '2026-11-20T09:00:00.000000000Z')`)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckRekeyed(t, db)
}

// Pets stored before name_lower (migration 9) are found by the name filter after the
// upgrade: migration 10 folds their names as Go does.
func TestUpgradingLowersPetNames(t *testing.T) {
	path := oldDatabase(t, 8,
		`INSERT INTO categories (id, name, name_lower) VALUES (1, 'Dogs', 'dogs')`,
		`INSERT INTO pets (id, name, category_id, status) VALUES (1, '`+storetest.OldPetNames[0]+`', 1, 'available'), (2, '`+storetest.OldPetNames[1]+`', 1, 'sold')`)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckLoweredPetNames(t, db)
}

// Pets stored before the name index (migration 13) are found by the name filter after
// the upgrade, by short and long parts of their names: migration 13 files them.
func TestUpgradingIndexesPetNames(t *testing.T) {
	path := oldDatabase(t, 10,
		`INSERT INTO categories (id, name, name_lower) VALUES (1, 'Dogs', 'dogs')`,
		`INSERT INTO pets (id, name, name_lower, category_id, status) VALUES (1, '`+storetest.OldPetNames[0]+`', '`+petstore.NameKey(storetest.OldPetNames[0])+`', 1, 'available'), (2, '`+storetest.OldPetNames[1]+`', '`+petstore.NameKey(storetest.OldPetNames[1])+`', 1, 'sold')`)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckLoweredPetNames(t, db)
}

// Pets stored before held (migration 17) count their open orders' units towards the
// largest stock after the upgrade, and a stock past the largest is brought back to it.
func TestUpgradingFillsHeldUnits(t *testing.T) {
	path := oldDatabase(t, 16, append([]string{
		`INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', '2026-11-20T09:00:00.000000000Z')`,
	}, storetest.OldHeldRows...)...)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckUpgradedHeld(t, db)
}

// A category named before invisible characters were refused in names keeps its name
// through a replacement that leaves it alone.
func TestACategoryKeepsANameFromBeforeThePolicy(t *testing.T) {
	path := oldDatabase(t, 17, `INSERT INTO categories (id, name, name_lower) VALUES (1, '`+storetest.OldCategoryName+`', '`+petstore.NameKey(storetest.OldCategoryName)+`')`)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckKeptCategoryName(t, db)
}

// Orders stored before they kept their history (migration 18) read with a status, the
// time they were placed and what could be known of the rest, and count in the sales
// report.
func TestUpgradingKeepsEveryOrderReadable(t *testing.T) {
	path := oldDatabase(t, 17, append([]string{
		`INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', '2026-11-17T09:00:00.000000000Z')`,
	}, storetest.OldOrderRows...)...)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckUpgradedOrders(t, db)
}
