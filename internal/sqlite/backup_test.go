package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// shop opens a store at path with one account and one pet of the given stock.
func shop(t *testing.T, path string, stock int) (db *sqlite.DB, account, pet int64) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := db.CreateAccount(ctx, "buyer@example.com", "", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	price := int64(1999)
	p, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: cat.ID, Status: petstore.Available, Price: &price})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetInventory(ctx, p.ID, stock); err != nil {
		t.Fatal(err)
	}
	return db, acct.ID, p.ID
}

// checkCopy opens the backup at path and checks that every order in acked (id →
// time of its answer) that was answered before at is in it, that every order in it
// was answered, and that its stock and its orders
// add up to stock.
func checkCopy(t *testing.T, path string, pet int64, stock int, acked map[int64]time.Time, at time.Time) (orders int) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	restored := filepath.Join(dir, "restored.db")
	if _, err := sqlite.Restore(ctx, path, restored, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, restored)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for id, when := range acked {
		if !when.Before(at) {
			continue
		}
		if _, err := db.Order(ctx, id, 0); err != nil {
			t.Errorf("order %d, acknowledged before the copy's instant, is not in the copy: %v", id, err)
		}
	}
	ordered := 0
	for page := (petstore.Page{Limit: 500}); ; {
		list, err := db.Orders(ctx, petstore.OrderFilter{}, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			orders++
			ordered += o.Quantity
			if _, ok := acked[o.ID]; !ok {
				t.Errorf("order %d is in the copy but was never placed", o.ID)
			}
		}
		if len(list) < page.Limit {
			break
		}
		page.After = list[len(list)-1].ID
	}
	p, err := db.Pet(ctx, pet)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stock+ordered != stock {
		t.Errorf("the copy has %d in stock and %d ordered: %d, want %d", p.Stock, ordered, p.Stock+ordered, stock)
	}
	return orders
}

// TestABackupIsTheStateOfOneInstantWhileOrdersAreStreaming copies the database, from
// the serving process (DB.Backup) and from outside it (BackupFile), while orders are
// placed from several goroutines: each copy passes its integrity check, holds every
// order placed before its instant, and its stock and orders add up.
func TestABackupIsTheStateOfOneInstantWhileOrdersAreStreaming(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db")
	const stock = 1_000_000
	db, account, pet := shop(t, path, stock)
	defer db.Close()

	var (
		mu    sync.Mutex
		acked = map[int64]time.Time{}
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				o, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[o.Order.ID] = time.Now()
				mu.Unlock()
			}
		}()
	}
	waitFor := func(n int) {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) || t.Failed() {
				t.Fatalf("only %d orders placed in 20 s", got)
			}
		}
	}
	waitFor(200)
	inside, err := db.Backup(ctx, filepath.Join(dir, "inside.db"), false)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(400)
	outside, err := sqlite.BackupFile(ctx, path, filepath.Join(dir, "outside.db"), false)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(600)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, s := range []sqlite.Snapshot{inside, outside} {
		t.Run(filepath.Base(s.Path), func(t *testing.T) {
			n := checkCopy(t, s.Path, pet, stock, acked, s.At)
			if int64(n) != s.Orders || s.Pets != 1 || s.Accounts != 1 || s.Version == 0 || s.Size == 0 || s.NewestOrder.IsZero() {
				t.Errorf("the snapshot says %+v, and the copy has %d orders", s, n)
			}
			t.Logf("%d of %d orders in the copy", n, len(acked))
		})
	}
	if outside.Orders <= inside.Orders {
		t.Errorf("the later copy has %d orders, the earlier %d", outside.Orders, inside.Orders)
	}
}

func TestABackupNeverReplacesAFileUnlessForced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, _, _ := shop(t, filepath.Join(dir, "p.db"), 10)
	defer db.Close()
	dst := filepath.Join(dir, "b.db")
	if err := os.WriteFile(dst, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Backup(ctx, dst, false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a backup over a file: %v, want it refused", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "precious" {
		t.Errorf("the file was changed: %q", b)
	}
	if _, err := db.Backup(ctx, dst, true); err != nil {
		t.Errorf("a forced backup: %v", err)
	}
	if s, err := sqlite.Inspect(ctx, dst); err != nil || s.Pets != 1 {
		t.Errorf("the forced backup: %+v %v", s, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".b.db.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestARestoreRefusesWhileTheDatabaseIsOpen: a process with the database open holds
// its shared lock, and the restore says who holds it.
func TestARestoreRefusesWhileTheDatabaseIsOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db")
	db, _, _ := shop(t, path, 10)
	backup := filepath.Join(dir, "b.db")
	if _, err := db.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Restore(ctx, backup, path, sqlite.RestoreOptions{})
	if !errors.Is(err, sqlite.ErrInUse) || !strings.Contains(err.Error(), path+".lock") {
		t.Fatalf("a restore over an open database: %v, want ErrInUse naming the lock file", err)
	}
	if pid := strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), "process "+pid) && runtime.GOOS == "linux" {
		t.Errorf("the error does not name this process (%s): %v", pid, err)
	}
	t.Log(err)
	db.Close()
	if _, err := sqlite.Restore(ctx, backup, path, sqlite.RestoreOptions{}); err != nil {
		t.Errorf("a restore once the database is closed: %v", err)
	}
}

// copyFile copies the file at from to to, when from exists.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestARestoreKeepsTheCrashedDatabaseWhole restores a backup over a database that a
// killed process left with commits still in its write-ahead log: the new database
// has the backup's orders and no log of the old one beside it, and the kept old
// database has every order, the logged ones included.
func TestARestoreKeepsTheCrashedDatabaseWhole(t *testing.T) {
	ctx := context.Background()
	live := filepath.Join(t.TempDir(), "p.db")
	db, account, pet := shop(t, live, 100)
	defer db.Close()
	order := func() {
		if _, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: account, PetID: pet, Quantity: 1}); err != nil {
			t.Fatal(err)
		}
	}
	order()
	dir := t.TempDir()
	backup := filepath.Join(dir, "b.db")
	if _, err := db.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	order()
	order()
	// The files as a SIGKILL would leave them: the open store has not checkpointed.
	crashed := filepath.Join(dir, "p.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		copyFile(t, live+suffix, crashed+suffix)
	}
	if fi, err := os.Stat(crashed + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the crashed database has no write-ahead log to lose: %v", err)
	}
	at := time.Date(2026, 11, 27, 16, 4, 5, 0, time.UTC)
	r, err := sqlite.Restore(ctx, backup, crashed, sqlite.RestoreOptions{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if want := crashed + ".before-restore-20261127T160405Z"; r.Kept != want {
		t.Errorf("kept as %q, want %q", r.Kept, want)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(crashed + suffix); err == nil {
			t.Errorf("%s%s is beside the restored database", crashed, suffix)
		}
	}
	for path, want := range map[string]int64{crashed: 1, r.Kept: 3} {
		s, err := sqlite.Inspect(ctx, path)
		if err != nil || s.Orders != want {
			t.Errorf("%s: %d orders (%v), want %d", filepath.Base(path), s.Orders, err, want)
		}
	}
}

// TestARestoreRefusesABackupItCannotServe: a file that is no database, a truncated
// backup, and a backup of a newer petstore are refused, and the database is left as
// it was.
func TestARestoreRefusesABackupItCannotServe(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db")
	db, _, _ := shop(t, path, 10)
	good := filepath.Join(dir, "good.db")
	if _, err := db.Backup(ctx, good, false); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	copyFile(t, good, newer)
	conn, err := sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for name, tc := range map[string]struct {
		content []byte // written to the file, unless nil
		file    string
		want    string
	}{
		"a text file":              {content: []byte("not a database at all, but long enough to look at its header......................................................"), want: "not a database"},
		"a truncated backup":       {content: b[:len(b)/2], want: "restore: the backup"},
		"a backup of a newer shop": {file: newer, want: "newer than this petstore knows"},
		"an empty database":        {content: []byte{}, want: "not a petstore database"},
	} {
		t.Run(name, func(t *testing.T) {
			from := tc.file
			if tc.content != nil {
				from = filepath.Join(t.TempDir(), "bad.db")
				if err := os.WriteFile(from, tc.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := sqlite.Restore(ctx, from, path, sqlite.RestoreOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("restore: %v, want an error with %q", err, tc.want)
			}
			if s, err := sqlite.Inspect(ctx, path); err != nil || s.Pets != 1 {
				t.Errorf("the database after the refusal: %+v %v", s, err)
			}
		})
	}
}
