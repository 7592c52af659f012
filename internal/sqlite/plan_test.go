package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/storetest"
)

// planCase is one list query of the store with the arguments of one request.
// Selective says that the query's filter keeps few of the table's rows: walking the
// table in id order until the page is full would then read most of it, so an index
// must serve the filter itself (an equality, or the name index's MATCH).
// Known, when set, says why the walk is accepted for now: the test then only checks
// that the query still walks (so that the note goes once it does not).
type planCase struct {
	name      string
	selective bool
	query     func() (string, []any)
	known     string
}

// TestListQueriesAreServedByIndexes asks SQLite for the plan of every list and search
// query the store runs, on a database analysed with thousands of rows, and fails when
// one reads a whole table: a SCAN of a table (even USING INDEX or COVERING INDEX,
// which walk all of it), or a selective filter that no index serves. The queries come
// from the store's own builders and constants: petsQuery (pets and inventory),
// ordersQuery, qCategories, qAPIKeys, qWebhooks, qDeliveryRows, spanQuery, the
// claims' qDueRetries and qUnsent, and eventsQuery.
func TestListQueriesAreServedByIndexes(t *testing.T) {
	if testing.Short() {
		// One goroutine reading plans: nothing for the race run (-short) to see, and
		// the plain run checks every plan.
		t.Skip("query plans: checked by the run without -short")
	}
	t.Parallel() // builds thousands of rows in a database of its own: beside the store suite, not before it
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "petstore.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := storetest.BuildPlanData(t, db)
	if _, err := db.write.ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}

	page := petstore.Page{Limit: 20}
	after := petstore.Page{Limit: 20, After: 1500}
	pets := func(f petstore.PetFilter, p petstore.Page) (string, []any) {
		// The store walks the list of the rarest tag (rarestTag); so does the plan.
		var drive string
		if len(f.Tags) > 0 && f.Name == "" && len(f.IDs) == 0 {
			drive, _, _ = db.rarestTag(ctx, f.TagKeys())
		}
		return petsQuery(petColumns, f, p, drive)
	}
	stock := func(f petstore.InventoryFilter) (string, []any) {
		return petsQuery(`id, stock, status`, f.Pets(), page, "")
	}
	orders := ordersQuery
	// A day long past: the plan data's orders are all placed today, so that a range
	// served by an index finds none of them, and one that walks the orders reads all.
	dayStart := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	dayEnd := dayStart.AddDate(0, 0, 1)
	quarterFrom, quarterTo := "2020-01-01", "2020-03-31"
	events := eventsQuery
	query := func(q string, args ...any) func() (string, []any) {
		return func() (string, []any) { return q, args }
	}
	cases := []planCase{
		{"pets, the first page", false, func() (string, []any) { return pets(petstore.PetFilter{}, page) }, ""},
		{"pets after a cursor", false, func() (string, []any) { return pets(petstore.PetFilter{}, after) }, ""},
		{"pets by status", true, func() (string, []any) { return pets(petstore.PetFilter{Status: petstore.Sold}, after) }, ""},
		{"pets by category", true, func() (string, []any) { return pets(petstore.PetFilter{CategoryID: d.Category}, after) }, ""},
		{"pets by ids", true, func() (string, []any) { return pets(petstore.PetFilter{IDs: d.PetIDs}, page) }, ""},
		{"pets by a long name", true, func() (string, []any) { return pets(petstore.PetFilter{Name: d.RareName}, page) }, ""},
		{"pets by a name of two characters", true, func() (string, []any) { return pets(petstore.PetFilter{Name: d.RareShort}, page) }, ""},
		{"pets by a name of one character", true, func() (string, []any) { return pets(petstore.PetFilter{Name: "z"}, after) }, ""},
		{"pets by name and status", true, func() (string, []any) { return pets(petstore.PetFilter{Name: d.RareName, Status: petstore.Sold}, page) }, ""},
		{"pets by name and category", true, func() (string, []any) {
			return pets(petstore.PetFilter{Name: d.RareName, CategoryID: d.Category}, page)
		}, ""},
		{"pets by name and ids", true, func() (string, []any) { return pets(petstore.PetFilter{Name: d.RareName, IDs: d.PetIDs}, page) }, ""},
		{"pets by a rare tag", true, func() (string, []any) { return pets(petstore.PetFilter{Tags: []string{d.RareTag}}, page) }, ""},
		{"pets by a common tag", false, func() (string, []any) { return pets(petstore.PetFilter{Tags: []string{d.CommonTag}}, after) }, ""},
		{"pets by a rare and a common tag", true, func() (string, []any) {
			return pets(petstore.PetFilter{Tags: []string{d.CommonTag, d.RareTag}}, page)
		}, ""},
		{"pets by tag and status", true, func() (string, []any) {
			return pets(petstore.PetFilter{Tags: []string{d.RareTag}, Status: petstore.Sold}, page)
		}, ""},
		{"pets by tag and name", true, func() (string, []any) {
			return pets(petstore.PetFilter{Tags: []string{d.CommonTag}, Name: d.RareName}, page)
		}, ""},
		{"pets by tag and ids", true, func() (string, []any) {
			return pets(petstore.PetFilter{Tags: []string{d.CommonTag}, IDs: d.PetIDs}, page)
		}, ""},
		{"inventory, the first page", false, func() (string, []any) { return stock(petstore.InventoryFilter{}) }, ""},
		{"inventory by status", true, func() (string, []any) { return stock(petstore.InventoryFilter{Status: petstore.Sold}) }, ""},
		{"inventory by ids", true, func() (string, []any) { return stock(petstore.InventoryFilter{IDs: d.PetIDs}) }, ""},
		{"all orders", false, func() (string, []any) { return orders(petstore.OrderFilter{}, after) }, ""},
		{"a customer's orders", true, func() (string, []any) { return orders(petstore.OrderFilter{AccountID: d.Account}, page) }, ""},
		{"a customer's placed orders", true, func() (string, []any) {
			return orders(petstore.OrderFilter{AccountID: d.Account, Status: petstore.Placed}, page)
		}, ""},
		{"a customer's orders, oldest first, after a cursor", true, func() (string, []any) {
			return orders(petstore.OrderFilter{AccountID: d.Account, Oldest: true}, after)
		}, ""},
		{"completed orders", true, func() (string, []any) { return orders(petstore.OrderFilter{Status: petstore.Completed}, page) }, ""},
		{"placed orders", true, func() (string, []any) { return orders(petstore.OrderFilter{Status: petstore.Placed}, after) }, ""},
		{"cancelled orders", true, func() (string, []any) { return orders(petstore.OrderFilter{Status: petstore.Cancelled}, page) }, ""},
		{"orders placed in a day", true, func() (string, []any) {
			return orders(petstore.OrderFilter{CreatedAfter: &dayStart, CreatedBefore: &dayEnd}, page)
		}, ""},
		{"a customer's orders placed in a day", true, func() (string, []any) {
			return orders(petstore.OrderFilter{AccountID: d.Account, CreatedAfter: &dayStart, CreatedBefore: &dayEnd}, page)
		}, ""},
		{"completed orders placed in a day", true, func() (string, []any) {
			return orders(petstore.OrderFilter{Status: petstore.Completed, CreatedAfter: &dayStart, CreatedBefore: &dayEnd}, page)
		}, ""},
		{"the sales totals of a quarter", true, query(qSalesTotals, quarterFrom, quarterTo), ""},
		{"the sales of a quarter by day", true, query(qSalesByDay, quarterFrom, quarterTo), ""},
		{"the sales of a quarter by pet", true, query(qSalesByPet, quarterFrom, quarterTo, 100), ""},
		{"the sales of a quarter by category", true, query(qSalesByCategory, quarterFrom, quarterTo, 100), ""},
		{"categories", false, query(qCategories, 0, 20), ""},
		{"an account's keys", true, query(qAPIKeys, d.Account, 0, 20), ""},
		{"the enabled admins, counted", true, query(qEnabledAdmins), ""},
		{"an account's live keys, counted", true, query(`SELECT (`+qLiveKeys+`) FROM accounts a WHERE a.id = ?`, d.Account), ""},
		{"accounts by ids", true, func() (string, []any) { return accountsQuery(petstore.AccountFilter{IDs: []int64{d.Account}}, page) }, ""},
		{"accounts, a page", false, func() (string, []any) { return accountsQuery(petstore.AccountFilter{}, after) }, ""},
		{"the admins, a page", true, func() (string, []any) { return accountsQuery(petstore.AccountFilter{Role: petstore.Admin}, page) }, ""},
		{"the customers after a cursor", false, func() (string, []any) {
			return accountsQuery(petstore.AccountFilter{Role: petstore.Customer}, after)
		}, ""},
		// The webhook and delivery queries change with the fan-out; a row each.
		{"webhooks", false, query(qWebhooks, 0, 20), ""},
		{"an endpoint's delivery rows", true, query(qDeliveryRows, d.Webhook, 0, 20), ""},
		{"the deliveries an endpoint's spans tell of", false, func() (string, []any) {
			return spanQuery(d.Webhook, []petstore.Span{{From: 0, To: 1 << 40, Events: petstore.MaskAll},
				{From: 1 << 40, To: 1 << 41, Events: petstore.OrderPlaced.Bit(), Failed: true}}, 1000, 20)
		}, ""},
		{"a claim's due retries", true, query(qDueRetries, d.Webhook, "2099-01-01T00:00:00Z", 20), ""},
		{"a claim's events after a cursor", false, query(qUnsent, 1000, 1<<40, int64(petstore.MaskAll), 20), ""},
		{"a record's pending deliveries, by key", true, query(qPendingAttempts, fmt.Sprintf("[[%d,1],[%d,2]]", d.Webhook, d.Webhook)), ""},
		{"a record's successes forgotten, by key", true, query(qForget, fmt.Sprintf("[[%d,1],[%d,2]]", d.Webhook, d.Webhook)), ""},
		{"the events feed", false, func() (string, []any) { return events(petstore.EventFilter{}, after) }, ""},
		{"the events feed of one type", true, func() (string, []any) { return events(petstore.EventFilter{Type: petstore.OrderCompleted}, page) }, ""},
		// The feed of a key limited to some types (petstore.Principal.FeedFilter): each
		// type from events_type, so that a key that may read only a rare type (the plan
		// data has no api_key.revoked) reads no event of the others.
		{"the events feed of a key that reads one rare type", true, func() (string, []any) {
			return events(petstore.EventFilter{Types: []petstore.EventType{petstore.APIKeyRevoked}}, after)
		}, ""},
		{"the events feed of a key that reads some types", true, func() (string, []any) {
			return events(petstore.EventFilter{Types: []petstore.EventType{petstore.OrderCompleted, petstore.APIKeyRevoked, petstore.PetSoldOut}}, after)
		}, ""},
		{"the events feed of a key that reads all types but one", false, func() (string, []any) {
			return events(petstore.EventFilter{Types: petstore.EventTypes[:len(petstore.EventTypes)-1]}, after)
		}, ""},
	}
	for _, pc := range cases {
		t.Run(pc.name, func(t *testing.T) {
			q, args := pc.query()
			plan := explain(t, db, q, args)
			why := planProblem(plan, pc.selective)
			switch {
			case pc.known != "" && why == "":
				t.Errorf("the query no longer walks its table; drop the note %q", pc.known)
			case pc.known != "":
				t.Logf("accepted (%s): %s: %s", pc.known, why, strings.Join(plan, "; "))
			case why != "":
				t.Errorf("%s\nplan:\n%s\nquery: %s", why, strings.Join(plan, "\n"), q)
			}
		})
	}
}

// explain returns the details of EXPLAIN QUERY PLAN for query, one line each.
func explain(t *testing.T, db *DB, query string, args []any) []string {
	t.Helper()
	rows, err := db.read.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var (
			id, parent, unused int
			detail             string
		)
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// planProblem says how a plan reads a whole table, or "".
// partialIndexes are the partial indexes of the schema, which hold few rows by their
// WHERE (migration 20).
var partialIndexes = []string{"accounts_enabled_admins"}

func partialIndex(line string) bool {
	for _, name := range partialIndexes {
		if strings.HasSuffix(line, " INDEX "+name) {
			return true
		}
	}
	return false
}

func planProblem(plan []string, selective bool) string {
	served := false
	// The rows of the query's own subqueries in FROM (a page of groups, which their
	// LIMIT bounds) are scanned by their names; those are not tables.
	derived := map[string]bool{}
	for _, line := range plan {
		for _, p := range []string{"CO-ROUTINE ", "MATERIALIZE "} {
			if name, ok := strings.CutPrefix(line, p); ok {
				derived[name] = true
			}
		}
	}
	for _, line := range plan {
		switch {
		case derived[strings.TrimPrefix(line, "SCAN ")]:
		case strings.HasPrefix(line, "SCAN json_each VIRTUAL TABLE"):
			// The ids of a batch lookup, from the query's own argument.
		case strings.HasPrefix(line, "SCAN pet_name_grams VIRTUAL TABLE INDEX"):
			// FTS5 reads only the posting lists of MATCH's terms when its plan has
			// the M constraint; without it, it reads every row.
			if !strings.Contains(line, ":M") {
				return "the name index is read whole"
			}
			served = true
		case strings.HasPrefix(line, "SCAN (subquery-"):
			// The rows of one of the query's own subqueries (the feed's types, a
			// page of each), which its LIMIT bounds: not a table.
		case strings.HasPrefix(line, "SCAN ") && partialIndex(line):
			// A partial index holds only the rows its WHERE selects (the enabled
			// admins, not every account): reading it whole reads those.
			served = true
		case strings.HasPrefix(line, "SCAN "):
			return "a table is read whole: " + line
		case strings.Contains(line, "=?"), strings.HasPrefix(line, "SEARCH ") && (strings.Contains(line, ">?") || strings.Contains(line, "<?")):
			// An equality, or a range of an index (days, dates).
			served = true
		}
	}
	if selective && !served {
		return "no index serves the filter: the table is walked in order, every row checked"
	}
	return ""
}
