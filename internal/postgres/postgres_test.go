package postgres_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/storetest"
)

// The tests run against the database named by PETSTORE_TEST_POSTGRES_URL, each in a
// schema of its own, and are skipped when it is not set.

func TestStore(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Run(t, func(t *testing.T, h storetest.Hooks) petstore.Store {
		o := postgres.Options{Now: h.Now}
		if h.BeforeCommit != nil {
			o.Loops = 1 // see storetest.Hooks
		}
		db := pgtest.OpenWith(t, url, o)
		if h.BeforeCommit != nil {
			postgres.SetBeforeCommitForTest(db, h.BeforeCommit)
		}
		postgres.SetPurgeChunkForTest(db, h.PurgeChunk, h.Purged)
		return db
	})
}

// openShared opens n stores on one new schema: n server processes sharing a
// database. They migrate at the same time.
func openShared(t *testing.T, n int) []*postgres.DB {
	t.Helper()
	url := pgtest.Schema(t, pgtest.URL(t))
	dbs := make([]*postgres.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = postgres.Open(context.Background(), url)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	return dbs
}

// setUpPet makes an account and an available pet with the given stock.
func setUpPet(t *testing.T, s petstore.Store, stock int) (account, pet int64) {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, "ada@example.com", "h", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available, Price: storetest.Price(1999)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetInventory(ctx, p.ID, stock); err != nil {
		t.Fatal(err)
	}
	return a.ID, p.ID
}

func TestSharedDatabase(t *testing.T) {
	storetest.Shared(t, func(t *testing.T, n int) []petstore.Store {
		var stores []petstore.Store
		for _, db := range openShared(t, n) {
			stores = append(stores, db)
		}
		return stores
	})
}

// Letter case is folded by Go on both stores, so they agree beyond ASCII whatever
// the database's ctype.
func TestLetterCaseIsFoldedBeyondASCII(t *testing.T) {
	db := pgtest.Open(t, pgtest.URL(t))
	ctx := context.Background()
	if _, err := db.CreateAccount(ctx, "Ærøskøbing@example.com", "h", petstore.Customer); err != nil {
		t.Fatal(err)
	}
	_, err := db.CreateAccount(ctx, "ÆRØSKØBING@EXAMPLE.COM", "h", petstore.Customer)
	if petstore.ErrorCode(err) != petstore.EConflict {
		t.Errorf("an email in other letters' case: %v, want conflict", err)
	}
	if _, _, err := db.AccountByEmail(ctx, "ærøskøbing@example.com"); err != nil {
		t.Errorf("lookup in lower case: %v", err)
	}
	if _, err := db.CreateCategory(ctx, petstore.Category{Name: "Égouttoirs"}); err != nil {
		t.Fatal(err)
	}
	_, err = db.CreateCategory(ctx, petstore.Category{Name: "éGOUTTOIRS"})
	if petstore.ErrorCode(err) != petstore.EConflict {
		t.Errorf("a category name in another case: %v, want conflict", err)
	}
}

// PostgreSQL text cannot hold NUL; such text is a validation error, not a 500.
func TestTextWithNULIsRefused(t *testing.T) {
	db := pgtest.Open(t, pgtest.URL(t))
	ctx := context.Background()
	a, err := db.CreateAccount(ctx, "ada@example.com", "h", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	err = db.CreateMessage(ctx, petstore.Message{ID: "m1", AccountID: a.ID, Text: "a\x00b", Status: petstore.MessageQueued, CreatedAt: time.Now()})
	if petstore.ErrorCode(err) != petstore.EValidationFailed {
		t.Errorf("message with NUL: %v, want validation_failed", err)
	}
	_, err = db.CreateCategory(ctx, petstore.Category{Name: "Dogs", Description: "a\x00b"})
	if petstore.ErrorCode(err) != petstore.EValidationFailed {
		t.Errorf("description with NUL: %v, want validation_failed", err)
	}
}

// A panic in a caller's callback must not leave a connection in a transaction
// holding a pet's row lock.
func TestAPanicInACallbackReleasesThePet(t *testing.T) {
	db := pgtest.Open(t, pgtest.URL(t))
	ctx := context.Background()
	account, pet := setUpPet(t, db, 5)
	func() {
		defer func() { recover() }()
		db.UpdatePet(ctx, pet, func(petstore.PetFields) (petstore.PetFields, error) { panic("boom") })
	}()
	if _, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := db.SetInventory(ctx, pet, 3); err != nil {
		t.Fatalf("a write after the panics: %v", err)
	}
	// The pet cache's notifier borrows a connection for a moment after each write
	// (petNotices); a connection the panic left acquired never comes back.
	for db.Stats().AcquiredConns() != 0 {
		if ctx.Err() != nil {
			t.Fatalf("%d connections are still acquired", db.Stats().AcquiredConns())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStatsReportThePool(t *testing.T) {
	db := pgtest.Open(t, pgtest.URL(t))
	if err := db.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := db.Stats()
	if s.MaxConns() != pgtest.MaxConns || s.TotalConns() < 1 {
		t.Errorf("max %d, total %d connections; want max %d and at least one", s.MaxConns(), s.TotalConns(), pgtest.MaxConns)
	}
}

func TestOpenRefusesAMissingSchema(t *testing.T) {
	url := pgtest.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	_, err := postgres.Open(context.Background(), url+sep+"search_path=petstore_no_such_schema")
	if err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("open = %v, want an error about the schema", err)
	}
}

func TestAPasswordIsNotShownInErrors(t *testing.T) {
	for _, url := range []string{
		"postgres://ada:s3cret-pw@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", // nobody listens
		"postgres://ada:s3cret-pw@127.0.0.1:port/x",                                // not a URL pgx can read
	} {
		_, err := postgres.Open(context.Background(), url)
		if err == nil {
			t.Fatalf("open %s succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// BenchmarkPlaceOrder measures batched order placement (see storetest.BenchPlacement).
func BenchmarkPlaceOrder(b *testing.B) {
	url := pgtest.URL(b)
	storetest.BenchPlacement(b, func(b *testing.B) petstore.Store { return pgtest.Open(b, url) })
}

func BenchmarkPrincipalByKeyHash(b *testing.B) {
	db := pgtest.Open(b, pgtest.URL(b))
	ctx := context.Background()
	a, err := db.CreateAccount(ctx, "ada@example.com", "h", petstore.Customer)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("h")}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.PrincipalByKeyHash(ctx, []byte("h")); err != nil {
			b.Fatal(err)
		}
	}
}

// A database made before Idempotency-Keys held domain results (migration 2) keeps the
// answers of its keys: an upgraded server replays them as the old one would have.
func TestUpgradingKeepsTheAnswersOfIdempotencyKeys(t *testing.T) {
	url := oldSchema(t, 1,
		`INSERT INTO accounts (email, email_lower, role, created_at) OVERRIDING SYSTEM VALUE VALUES ('a@example.com', 'a@example.com', 'customer', now())`,
		`INSERT INTO idempotency_keys (account_id, key, request_hash, status, location, body, created_at) VALUES
		 (1, 'placed', '\x68', 201, '/v1/store/orders/7', convert_to('{"id":7,"petId":3,"quantity":2,"shipDate":"2031-01-02T03:04:05Z","complete":false,"accountId":1,"createdAt":"2026-11-20T10:00:00Z"}', 'UTF8'), '2026-11-20T09:59:59.9Z'),
		 (1, 'refused', '\x68', 409, '', convert_to('{"code":"insufficient_stock","message":"Only 1 in stock; 2 were ordered.","status":409}', 'UTF8'), '2026-11-20T10:00:00Z'),
		 (1, 'invalid', '\x68', 400, '', convert_to('{"code":"validation_failed","message":"The request is not valid: quantity must be 1 to 100.","status":400,"details":[{"field":"quantity","problem":"must be 1 to 100"}]}', 'UTF8'), '2026-11-20T10:00:00Z'),
		 (1, 'running', '\x68', NULL, '', NULL, '2026-11-20T10:00:00Z')`,
	)
	db, err := postgres.OpenWith(context.Background(), url, postgres.Options{Now: func() time.Time { return storetest.OldKeysAt.Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckUpgradedKeys(t, db)
}

// The server ending the store's connection in the middle of a transaction (as a
// shutdown or restart does: SQLSTATE 57P01) is a passing failure: the store reports it
// unavailable, and it recovers on its own.
func TestAConnectionEndedByTheServerIsUnavailableAndTheStoreRecovers(t *testing.T) {
	base := pgtest.URL(t)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	app := fmt.Sprintf("petstore_terminate_test_%d", time.Now().UnixNano()) // its own: other runs may share the server
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	db := pgtest.OpenWith(t, base+sep+"application_name="+app, postgres.Options{})
	postgres.SetBeforeCommitForTest(db, func() error {
		once.Do(func() { close(held); <-release })
		return nil
	})
	ctx := context.Background()
	account, pet := setUpPet(t, db, 5)
	// Idle connections, which the server ends too: the next order must not take one.
	if err := postgres.HoldIdleConnsForTest(ctx, db, 3); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1})
		errc <- err
	}()
	<-held // the batch holds its connection in a transaction
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app); err != nil {
		t.Fatal(err)
	}
	close(release)
	err = <-errc
	if err == nil {
		t.Fatal("an order committed on a connection the server had ended")
	}
	if !db.Unavailable(err) {
		t.Errorf("a connection ended by the server: %v, not reported unavailable", err)
	}
	if _, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1}); err != nil {
		t.Errorf("the next order, on a new connection: %v", err)
	}
	if p, err := db.Pet(ctx, pet); err != nil || p.Stock != 4 {
		t.Errorf("pet = %+v, %v; want one order placed", p, err)
	}
	if db.Unavailable(petstore.Invalid("name", "x")) {
		t.Error("a validation error is reported unavailable")
	}
	// A connection cut under a query (the server gone, a proxy restarted) ends in EOF.
	if !db.Unavailable(fmt.Errorf("inventory: %w", io.ErrUnexpectedEOF)) {
		t.Error("a connection that ended under a query is not reported unavailable")
	}
}

// An account stored under a key of the old, one-round EmailKey is found again after
// the upgrade (migration 4).
func TestUpgradingRekeysEmails(t *testing.T) {
	url := oldSchema(t, 3, `INSERT INTO accounts (email, email_lower, role, created_at) OVERRIDING SYSTEM VALUE VALUES ('`+
		storetest.UnstableEmail+`', '`+storetest.UnstableEmailOldKey()+`', 'customer', now())`)
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckRekeyed(t, db)
}

// Pets stored before name_lower (migration 6) are found by the name filter after the
// upgrade: migration 7 folds their names as Go does.
func TestUpgradingLowersPetNames(t *testing.T) {
	url := oldSchema(t, 5,
		`INSERT INTO categories (id, name, name_lower) OVERRIDING SYSTEM VALUE VALUES (1, 'Dogs', 'dogs')`,
		`INSERT INTO pets (id, name, category_id, status) OVERRIDING SYSTEM VALUE VALUES (1, '`+storetest.OldPetNames[0]+`', 1, 'available'), (2, '`+storetest.OldPetNames[1]+`', 1, 'sold')`,
	)
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckLoweredPetNames(t, db)
}

// Pets stored before name_grams (migration 10) are found by the name filter after the
// upgrade, by short and long parts of their names: migration 10 fills their terms.
func TestUpgradingIndexesPetNames(t *testing.T) {
	url := oldSchema(t, 7,
		`INSERT INTO categories (id, name, name_lower) OVERRIDING SYSTEM VALUE VALUES (1, 'Dogs', 'dogs')`,
		`INSERT INTO pets (id, name, name_lower, category_id, status) OVERRIDING SYSTEM VALUE VALUES (1, '`+storetest.OldPetNames[0]+`', '`+petstore.NameKey(storetest.OldPetNames[0])+`', 1, 'available'), (2, '`+storetest.OldPetNames[1]+`', '`+petstore.NameKey(storetest.OldPetNames[1])+`', 1, 'sold')`,
	)
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckLoweredPetNames(t, db)
}

// Pets stored before held (migration 13) count their open orders' units towards the
// largest stock after the upgrade, and a stock past the largest is brought back to it.
func TestUpgradingFillsHeldUnits(t *testing.T) {
	// The old rows keep their ids: identities are set by hand, as a restore would.
	account := `INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', now())`
	var rows []string
	for _, q := range append([]string{account}, storetest.OldHeldRows...) {
		rows = append(rows, strings.Replace(q, ") VALUES", ") OVERRIDING SYSTEM VALUE VALUES", 1))
	}
	db, err := postgres.Open(context.Background(), oldSchema(t, 12, rows...))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckUpgradedHeld(t, db)
}

// A category named before invisible characters were refused in names keeps its name
// through a replacement that leaves it alone.
func TestACategoryKeepsANameFromBeforeThePolicy(t *testing.T) {
	db, err := postgres.Open(context.Background(), oldSchema(t, 13,
		`INSERT INTO categories (id, name, name_lower) OVERRIDING SYSTEM VALUE VALUES (1, '`+storetest.OldCategoryName+`', '`+petstore.NameKey(storetest.OldCategoryName)+`')`))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckKeptCategoryName(t, db)
}

// oldSchema makes a schema as a release that had the migrations up to version left
// it, holding what the statements write, and returns its URL.
func oldSchema(t *testing.T, version int64, statements ...string) string {
	t.Helper()
	ctx := context.Background()
	url := pgtest.Schema(t, pgtest.URL(t))
	if err := postgres.MigrateUpToForTest(ctx, url, version); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range statements {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return url
}

// BenchmarkNameSearch measures the name filter on small and large catalogues (see
// storetest.BenchNameSearch).
func BenchmarkNameSearch(b *testing.B) {
	url := pgtest.URL(b)
	storetest.BenchNameSearch(b, func(b *testing.B) petstore.Store {
		return pgtest.OpenWith(b, url, postgres.Options{})
	}, func(b *testing.B, st petstore.Store) {
		if err := st.(*postgres.DB).AnalyzeForTest(context.Background()); err != nil {
			b.Fatal(err)
		}
	}, 1000, 100000)
}

// Orders stored before they kept their history (migration 14) read with a status, the
// time they were placed and what could be known of the rest, and count in the sales
// report.
func TestUpgradingKeepsEveryOrderReadable(t *testing.T) {
	account := `INSERT INTO accounts (id, email, email_lower, role, created_at) VALUES (1, 'a@example.com', 'a@example.com', 'customer', now())`
	var rows []string
	for _, q := range append([]string{account}, storetest.OldOrderRows...) {
		if !strings.HasPrefix(q, "INSERT INTO events") && !strings.HasPrefix(q, "INSERT INTO orders") {
			q = strings.Replace(q, ") VALUES", ") OVERRIDING SYSTEM VALUE VALUES", 1)
		}
		rows = append(rows, q)
	}
	db, err := postgres.Open(context.Background(), oldSchema(t, 13, rows...))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckUpgradedOrders(t, db)
}
