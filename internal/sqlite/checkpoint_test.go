package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// The server's writer makes no checkpoint of its own (wal_autocheckpoint is 0, so
// that no order waits for one inside a commit): the checkpointer beside it must
// still start the log over, or it would grow with every write. With Litestream
// (ExternalCheckpoints) nothing in the store checkpoints, and the log grows until
// Litestream does.
func TestTheCheckpointerBoundsTheLog(t *testing.T) {
	const (
		pageFrame = 4096 + 24 // a log frame: a page and its header
		pets      = 800       // about 7,500 pages of log if it never started over
		bound     = 5000      // pages: five times the point where the copy is finished
	)
	for _, tc := range []struct {
		name    string
		opts    sqlite.Options
		bounded bool
	}{
		{"a server's log starts over", sqlite.Options{}, true},
		{"with Litestream's checkpoints, the store makes none", sqlite.Options{ExternalCheckpoints: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "shop.db")
			db, err := sqlite.OpenWith(ctx, path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
			if err != nil {
				t.Fatal(err)
			}
			// A long description makes each commit write several pages.
			description := strings.Repeat("a good dog ", petstore.MaxPetDescription/11)
			var largest int64
			for i := range pets {
				if _, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: cat.ID, Status: petstore.Available, Description: description}); err != nil {
					t.Fatalf("pet %d: %v", i, err)
				}
				if fi, err := os.Stat(path + "-wal"); err == nil {
					largest = max(largest, fi.Size()/pageFrame)
				}
			}
			t.Logf("largest log: %d pages", largest)
			if tc.bounded && largest > bound {
				t.Errorf("the log grew to %d pages, want at most %d", largest, bound)
			}
			if !tc.bounded && largest <= bound {
				t.Errorf("the log grew to %d pages only: something checkpointed it", largest)
			}
		})
	}
}
