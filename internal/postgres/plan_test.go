package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/storetest"
)

// planCase is one list query of the store with the arguments of one request.
// Selective says that the query's filter keeps few of the table's rows: walking the
// table in id order until the page is full would then read most of it, so an index
// must serve the filter itself. Known, when set, says why a walk is accepted for now:
// the test then only checks that the query still walks.
type planCase struct {
	name      string
	selective bool
	query     func() (string, []any)
	known     string
}

// TestListQueriesAreServedByIndexes asks PostgreSQL for the plan of every list and
// search query the store runs, planned with the request's values as the store sends
// them, on a database analysed with thousands of rows, and fails when one reads a
// whole table (a Seq Scan) or a selective filter is only checked row by row on a
// walk by id. The queries come from the store's own builders and constants:
// petsQuery (pets and inventory), ordersQuery, qCategories, qAPIKeys, qWebhooks,
// qDeliveryRows, spanQuery, the claims' qDueRetries and qUnsent, and eventsQuery.
func TestListQueriesAreServedByIndexes(t *testing.T) {
	if testing.Short() {
		// One goroutine reading plans: nothing for the race run (-short) to see, and
		// the plain run checks every plan.
		t.Skip("query plans: checked by the run without -short")
	}
	t.Parallel() // builds thousands of rows in a database of its own: beside the store suite, not before it
	ctx := context.Background()
	db := pgtest.Open(t, pgtest.URL(t))
	d := storetest.BuildPlanData(t, db)
	if err := db.AnalyzeForTest(ctx); err != nil {
		t.Fatal(err)
	}

	page := petstore.Page{Limit: 20}
	after := petstore.Page{Limit: 20, After: 1500}
	pets := func(f petstore.PetFilter, p petstore.Page) (string, []any) {
		return postgres.PetsQueryForTest(postgres.PetColumnsForTest, f, p)
	}
	stock := func(f petstore.InventoryFilter) (string, []any) {
		return postgres.PetsQueryForTest(`id, stock, status`, f.Pets(), page)
	}
	orders := postgres.OrdersQueryForTest
	// A day long past: the plan data's orders are all placed today, so that a range
	// served by an index finds none of them, and one that walks the orders reads all.
	dayStart := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	dayEnd := dayStart.AddDate(0, 0, 1)
	quarterFrom, quarterTo := dayStart, dayStart.AddDate(0, 0, 89)
	events := postgres.EventsQueryForTest
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
		// sales_days holds a row a day (the plan data's orders are all of one day).
		{"the sales totals of a quarter", true, query(postgres.SalesTotalsForTest, quarterFrom, quarterTo), tinyTable},
		{"the sales of a quarter by day", true, query(postgres.SalesByDayForTest, quarterFrom, quarterTo), tinyTable},
		// The names of the groups shown (at most the limit) join the pets, archived
		// pets and categories by key; the plan data's archived pets and categories fit
		// a page.
		{"the sales of a quarter by pet", true, query(postgres.SalesByPetForTest, quarterFrom, quarterTo, 100), tinyTable},
		{"the sales of a quarter by category", true, query(postgres.SalesByCategoryForTest, quarterFrom, quarterTo, 100), tinyTable},
		{"categories", false, query(postgres.CategoriesForTest, 0, 20), tinyTable},
		{"an account's keys", true, query(postgres.APIKeysForTest, d.Account, 0, 20), ""},
		{"the enabled admins, locked", true, query(postgres.EnabledAdminsForTest), ""},
		{"an account's live keys, counted", true, query(postgres.LiveKeysForTest, d.Account), ""},
		{"accounts by ids", true, func() (string, []any) {
			return postgres.AccountsForTest(petstore.AccountFilter{IDs: []int64{d.Account}}, page)
		}, ""},
		{"accounts, a page", false, func() (string, []any) { return postgres.AccountsForTest(petstore.AccountFilter{}, after) }, ""},
		{"the admins, a page", true, func() (string, []any) {
			return postgres.AccountsForTest(petstore.AccountFilter{Role: petstore.Admin}, page)
		}, ""},
		{"the customers after a cursor", false, func() (string, []any) {
			return postgres.AccountsForTest(petstore.AccountFilter{Role: petstore.Customer}, after)
		}, ""},
		// The webhook and delivery queries change with the fan-out; a row each.
		{"webhooks", false, query(postgres.WebhooksForTest, 0, 20), tinyTable},
		// Not selective here: each of the plan data's five endpoints holds a fifth of
		// the rows, and walking them by event is as good as the primary key
		// (webhook_id, event_seq), which serves it when endpoints are many.
		{"an endpoint's delivery rows", false, query(postgres.DeliveriesForTest, d.Webhook, 0, 20), ""},
		{"the deliveries an endpoint's spans tell of", false, func() (string, []any) {
			return postgres.SpanQueryForTest(d.Webhook, []petstore.Span{{From: 0, To: 1 << 60, Events: petstore.MaskAll},
				{From: 1 << 60, To: 1<<61 + 1, Events: petstore.OrderPlaced.Bit(), Failed: true}}, 1000, 20)
		}, ""},
		{"a claim's due retries", true, query(postgres.DueRetriesForTest, d.Webhook, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), 20), ""},
		{"a claim's events after a cursor", false, query(postgres.UnsentForTest, int64(1000), int64(1)<<60, []string{"order.placed", "inventory.updated"}, 20), ""},
		{"the events feed", false, func() (string, []any) { return events(petstore.EventFilter{}, after) }, ""},
		// order.completed is about 1 event in 30 (the plan data's 2,000 keys make as many
		// api_key.created events): events_type serves it. At 1 in 23, before key events,
		// PostgreSQL walked seq, which fills a page within a few hundred rows.
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
			case pc.known != "" && why == "" && pc.known != tinyTable:
				t.Errorf("the query no longer walks its table; drop the note %q", pc.known)
			case pc.known == tinyTable && why == "":
				// A table of a page or so (sales_days holds one to salesStripes rows a
				// day, the stripe of each order drawn at random) is read by its index or
				// whole as its statistics fall: either is one page.
			case pc.known != "":
				t.Logf("accepted (%s): %s", pc.known, why)
			case why != "":
				t.Errorf("%s\nplan:\n%s\nquery: %s", why, strings.Join(plan, "\n"), q)
			}
		})
	}
}

// tinyTable is why a Seq Scan of a table of one page (40 categories, 5 endpoints) is
// right: reading the page costs less than the index would.
const tinyTable = "one page: reading it beats the primary key"

// explain returns the lines of EXPLAIN for query. The arguments go as the store
// sends them (a query mode first, when it gives one), so that the plan is the one
// the store's query gets.
func explain(t *testing.T, db *postgres.DB, query string, args []any) []string {
	t.Helper()
	plan, err := db.ExplainForTest(context.Background(), query, args)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// planProblem says how a plan reads a whole table, or "".
func planProblem(plan []string, selective bool) string {
	served := false
	for _, line := range plan {
		line = strings.TrimSpace(line)
		switch {
		case strings.Contains(line, "Seq Scan on "):
			return "a table is read whole: " + line
		case strings.Contains(line, "Index Scan using accounts_enabled_admins "), strings.Contains(line, "Index Only Scan using accounts_enabled_admins "):
			// A partial index (migration 15) holds only the rows its WHERE selects,
			// the enabled admins, not every account: reading it whole reads those.
			served = true
		case strings.HasPrefix(line, "Recheck Cond:"), strings.HasPrefix(line, "Index Cond:") && strings.ContainsAny(line, "=<>"):
			// A bitmap of an index's matches, or an index searched for a value or a
			// range (days, dates).
			served = true
		}
	}
	if selective && !served {
		return "no index serves the filter: the table is walked in order, every row checked"
	}
	return ""
}
