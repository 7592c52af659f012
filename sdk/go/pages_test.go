package petstore_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// These tests run against the real service that TestMain starts.

// A program that shows a page at a time stops after each page and keeps only the
// cursor; a later run (a new client here) goes on from it, and sees every pet once.
func TestPagingByHandResumesFromAStoredCursor(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	admin := service(t, rec, os.Getenv("PETSTORE_ADMIN_KEY"))
	cat := must(admin.CreateCategory(ctx, petstore.NewCategory{Name: "Pages " + strconv.FormatInt(time.Now().UnixNano(), 36)}))(t)
	var want []int64
	for i := range 5 {
		pet := must(admin.CreatePet(ctx, petstore.NewPet{Name: "Paged " + strconv.Itoa(i), CategoryID: cat.ID}))(t)
		want = append(want, pet.ID)
	}
	t.Cleanup(func() {
		for _, id := range want {
			_ = admin.DeletePet(ctx, id)
		}
		_ = admin.DeleteCategory(ctx, cat.ID)
	})

	var got []int64
	cursor, requests := "", 0
	for run := 1; ; run++ {
		if run > len(want)+1 {
			t.Fatalf("still paging after %d pages: %v", run-1, got)
		}
		client := service(t, rec, os.Getenv("PETSTORE_API_KEY")) // as if in another process
		opts := &petstore.ListPetsOptions{CategoryID: cat.ID, Limit: 2, Cursor: cursor}
		var page *petstore.Page[*petstore.Pet]
		for p, err := range client.ListPetsPages(ctx, opts) {
			page = must(p, err)(t)
			break // one page, then the program stops
		}
		requests++
		if page == nil {
			t.Fatalf("run %d: no page", run)
		}
		if page.Response == nil || page.Response.StatusCode != http.StatusOK || page.Response.RequestID == "" {
			t.Errorf("run %d: page.Response = %+v, want a 200 with a request id", run, page.Response)
		}
		for _, pet := range page.Items {
			got = append(got, pet.ID)
		}
		if page.Next == "" {
			break
		}
		if page.Next == cursor {
			t.Fatalf("run %d: Next = %q, the cursor it started from", run, page.Next)
		}
		cursor = page.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged by hand: %v, want %v, each once", got, want)
	}
	if requests != 3 { // 2 + 2 + 1
		t.Errorf("%d pages, want 3 of at most 2 pets", requests)
	}
	// Breaking out of the loop fetched no page that was not asked for.
	var listed int
	for _, a := range rec.answers {
		if a.method == http.MethodGet && a.path == "/v1/pets" {
			listed++
		}
	}
	if listed != requests {
		t.Errorf("%d requests for %d pages", listed, requests)
	}

	// The items iterator starts from a cursor too.
	var rest []int64
	for pet, err := range admin.ListPets(ctx, &petstore.ListPetsOptions{CategoryID: cat.ID, Limit: 2, Cursor: firstNext(t, admin, cat.ID)}) {
		rest = append(rest, must(pet, err)(t).ID)
	}
	if !slices.Equal(rest, want[2:]) {
		t.Errorf("ListPets from the second page's cursor = %v, want %v", rest, want[2:])
	}
}

// firstNext returns the Next of the first page of two pets of a category.
func firstNext(t *testing.T, c *petstore.Client, categoryID int64) string {
	t.Helper()
	for page, err := range c.ListPetsPages(context.Background(), &petstore.ListPetsOptions{CategoryID: categoryID, Limit: 2}) {
		return must(page, err)(t).Next
	}
	t.Fatal("no first page")
	return ""
}

// WithResponse hands over the answer of a success: its request id, its rate limits,
// and the Location of what a create made; and the answer of a refusal as well.
func TestWithResponseGivesTheAnswer(t *testing.T) {
	ctx := context.Background()
	admin := service(t, &recorder{}, os.Getenv("PETSTORE_ADMIN_KEY"))

	var res petstore.Response
	cat := must(admin.CreateCategory(ctx, petstore.NewCategory{Name: "Answers " + strconv.FormatInt(time.Now().UnixNano(), 36)}, petstore.WithResponse(&res)))(t)
	t.Cleanup(func() { _ = admin.DeleteCategory(ctx, cat.ID) })
	if res.StatusCode != http.StatusCreated {
		t.Errorf("StatusCode = %d, want 201", res.StatusCode)
	}
	if res.RequestID == "" || res.RequestID != res.Header.Get("X-Request-Id") {
		t.Errorf("RequestID = %q, want the X-Request-Id %q", res.RequestID, res.Header.Get("X-Request-Id"))
	}
	base := must(url.Parse(os.Getenv("PETSTORE_URL")))(t)
	if want := base.JoinPath("categories", strconv.FormatInt(cat.ID, 10)).String(); res.Location == nil || res.Location.String() != want {
		t.Errorf("Location = %v, want %s (resolved against the request)", res.Location, want)
	}
	limit, ok := res.RateLimit("default")
	if !ok || limit.Quota <= 0 || limit.Window <= 0 || limit.Remaining < 0 || limit.Remaining >= limit.Quota {
		t.Errorf("RateLimit(\"default\") = %+v, %v, want the policy with what is left of it (RateLimit-Policy %q, RateLimit %q)",
			limit, ok, res.Header.Get("RateLimit-Policy"), res.Header.Get("RateLimit"))
	}

	// Every call takes it: one without a body, and a list (its last page).
	if err := admin.DeleteCategory(ctx, cat.ID, petstore.WithResponse(&res)); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusNoContent || res.RequestID == "" || res.Location != nil {
		t.Errorf("DeleteCategory: %+v, want a 204 with a request id and no Location", res)
	}
	for _, err := range admin.ListCategories(ctx, nil, petstore.WithResponse(&res)) {
		must(0, err)(t)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Link") != "" {
		t.Errorf("ListCategories: %d, Link %q: want the last page's answer", res.StatusCode, res.Header.Get("Link"))
	}

	// A refusal: the same request id as the *Error's.
	_, err := admin.GetCategory(ctx, cat.ID, petstore.WithResponse(&res))
	var apiErr *petstore.Error
	if !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeNotFound {
		t.Fatalf("GetCategory of a deleted category: %v, want not_found", err)
	}
	if res.StatusCode != http.StatusNotFound || res.RequestID != apiErr.RequestID {
		t.Errorf("refused: Response %d %q, want 404 and the Error's request id %q", res.StatusCode, res.RequestID, apiErr.RequestID)
	}
}

// A poller of the feed reads it to its end and keeps the last cursor; from it, later,
// it gets exactly the events that came since.
func TestTheFeedResumesFromAStoredCursor(t *testing.T) {
	ctx := context.Background()
	admin := service(t, &recorder{}, os.Getenv("PETSTORE_ADMIN_KEY"))
	cat := must(admin.CreateCategory(ctx, petstore.NewCategory{Name: "Feed " + strconv.FormatInt(time.Now().UnixNano(), 36)}))(t)
	pet := must(admin.CreatePet(ctx, petstore.NewPet{Name: "Polled", CategoryID: cat.ID}))(t)
	t.Cleanup(func() {
		_ = admin.DeletePet(ctx, pet.ID)
		_ = admin.DeleteCategory(ctx, cat.ID)
	})
	// The stock of some pet changes in every test: the feed has events of this type.
	must(admin.SetInventory(ctx, pet.ID, petstore.InventoryUpdate{Quantity: 1}))(t)

	// poll reads the feed from cursor to its end, as the poller in the documentation
	// of ListEventsPages does, and returns the events and the cursor to keep.
	poll := func(cursor string) ([]*petstore.Event, string) {
		t.Helper()
		var events []*petstore.Event
		opts := &petstore.ListEventsOptions{Type: petstore.EventTypeInventoryUpdated, Limit: 5, Cursor: cursor}
		for page, err := range admin.ListEventsPages(ctx, opts) {
			events = append(events, must(page, err)(t).Items...)
			if page.Next != "" {
				cursor = page.Next
			}
		}
		return events, cursor
	}
	before, cursor := poll("")
	if len(before) == 0 || cursor == "" {
		t.Fatalf("the feed to its end: %d events, cursor %q; want some, and a cursor", len(before), cursor)
	}
	if again, same := poll(cursor); len(again) != 0 || same != cursor {
		t.Errorf("polled again at once: %d events, cursor %q; want none, and the cursor kept", len(again), same)
	}

	item := must(admin.SetInventory(ctx, pet.ID, petstore.InventoryUpdate{Quantity: 4}))(t)
	events, next := poll(cursor)
	if len(events) != 1 || events[0].Inventory == nil || *events[0].Inventory != *item {
		t.Fatalf("resumed: %d events (%v), want exactly the stock of pet %d set to 4", len(events), events, pet.ID)
	}
	if slices.ContainsFunc(before, func(e *petstore.Event) bool { return e.ID == events[0].ID }) {
		t.Errorf("event %s came before the cursor too", events[0].ID)
	}
	if next == cursor {
		t.Errorf("the cursor did not move past event %s", events[0].ID)
	}
}

// The rate-limit headers come as one line or several, with one entry per limit in
// force; an entry missing from RateLimit leaves Remaining at -1.
func TestResponseReadsTheRateLimitHeaders(t *testing.T) {
	tests := []struct {
		name           string
		policy, remain []string
		want           []petstore.RateLimit
	}{
		{"one limit", []string{`"default";q=100;w=1`}, []string{`"default";r=99;t=1`},
			[]petstore.RateLimit{{Policy: "default", Quota: 100, Window: time.Second, Remaining: 99, Reset: time.Second}}},
		{"two limits on one line", []string{`"default";q=100;w=1, "credentials";q=10;w=60`}, []string{`"default";r=0;t=1,"credentials";r=9;t=42`},
			[]petstore.RateLimit{
				{Policy: "default", Quota: 100, Window: time.Second, Remaining: 0, Reset: time.Second},
				{Policy: "credentials", Quota: 10, Window: time.Minute, Remaining: 9, Reset: 42 * time.Second},
			}},
		{"two limits on two lines", []string{`"default";q=100;w=1`, `"credentials";q=10;w=60`}, []string{`"credentials";r=9;t=42`},
			[]petstore.RateLimit{
				{Policy: "default", Quota: 100, Window: time.Second, Remaining: -1},
				{Policy: "credentials", Quota: 10, Window: time.Minute, Remaining: 9, Reset: 42 * time.Second},
			}},
		{"turned off", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Ratelimit-Policy"] = tt.policy
				w.Header()["Ratelimit"] = tt.remain
				answer(w, http.StatusOK, `{"id":1,"email":"a@example.com","role":"customer","createdAt":"2026-01-01T00:00:00Z"}`)
			})
			var res petstore.Response
			must(c.GetCurrentAccount(context.Background(), petstore.WithResponse(&res)))(t)
			if !slices.Equal(res.RateLimits, tt.want) {
				t.Errorf("RateLimits = %+v, want %+v", res.RateLimits, tt.want)
			}
		})
	}
}

// A call that got no answer leaves a zero Response, not the one of an earlier call.
func TestWithResponseIsZeroWithoutAnAnswer(t *testing.T) {
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		answer(w, http.StatusOK, `{}`)
	}, petstore.WithRetries(0))
	res := petstore.Response{StatusCode: 200, RequestID: "earlier"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.GetCurrentAccount(ctx, petstore.WithResponse(&res)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.StatusCode != 0 || res.RequestID != "" || res.Header != nil {
		t.Errorf("Response = %+v, want the zero Response", res)
	}
}
