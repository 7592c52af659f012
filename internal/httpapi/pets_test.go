package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

func TestPetsLifecycle(t *testing.T) {
	a := newTestAPI(t)
	dogs := a.category(t, "Dogs")

	var rex pet
	res := a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "  Rex ", "categoryId": dogs.ID}}).expect(201, "")
	res.JSON(&rex)
	if rex.Name != "Rex" || rex.Status != "available" || rex.CategoryID != dogs.ID {
		t.Fatalf("created %+v; want the trimmed name, status available", rex)
	}
	if loc := res.Header.Get("Location"); loc != path("/v1/pets/%d", rex.ID) {
		t.Errorf("Location = %q", loc)
	}
	t.Run("a new pet has a stock of 0", func(t *testing.T) {
		if inv := a.inventory(t, rex.ID); inv.Quantity != 0 {
			t.Fatalf("stock = %d", inv.Quantity)
		}
	})
	t.Run("a customer reads pets", func(t *testing.T) {
		var got []pet
		a.do(t, req{Method: "GET", Path: path("/v1/pets?ids=%d", rex.ID), Key: a.Customer}).expect(200, "").JSON(&got)
		if len(got) != 1 || got[0] != rex {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("PUT replaces every field and an omitted status means available", func(t *testing.T) {
		var p pet
		a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: map[string]any{"name": "Rex II", "categoryId": dogs.ID, "status": "pending"}}).expect(200, "").JSON(&p)
		if p.Name != "Rex II" || p.Status != "pending" {
			t.Fatalf("got %+v", p)
		}
		a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": dogs.ID}}).expect(200, "").JSON(&p)
		if p.Status != "available" {
			t.Fatalf("status = %s, want available", p.Status)
		}
	})
	t.Run("PATCH changes only the fields it names, as merge-patch or JSON", func(t *testing.T) {
		for _, ct := range []string{"application/merge-patch+json", "application/json"} {
			var p pet
			a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: `{"name":"Rex ` + ct + `"}`, Header: map[string]string{"Content-Type": ct}}).expect(200, "").JSON(&p)
			if p.Name != "Rex "+ct || p.Status != "available" || p.CategoryID != dogs.ID {
				t.Fatalf("%s: got %+v", ct, p)
			}
		}
	})
	t.Run("PATCH refuses null for a field that cannot be removed", func(t *testing.T) {
		a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: `{"name":null}`, Header: map[string]string{"Content-Type": "application/merge-patch+json"}}).expect(400, "validation_failed")
	})
	t.Run("an unknown category is a validation error on categoryId", func(t *testing.T) {
		res := a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "Ghost", "categoryId": 999}}).expect(400, "validation_failed")
		if !strings.Contains(string(res.Body), `"field":"categoryId"`) {
			t.Fatalf("no detail on categoryId: %s", res.Body)
		}
		a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: `{"categoryId":999}`, Header: map[string]string{"Content-Type": "application/merge-patch+json"}}).expect(400, "validation_failed")
	})
	t.Run("a deleted pet is gone", func(t *testing.T) {
		a.do(t, req{Method: "DELETE", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin}).expect(204, "")
		a.do(t, req{Method: "GET", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin}).expect(404, "not_found")
		a.do(t, req{Method: "DELETE", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin}).expect(404, "not_found")
		a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": dogs.ID}}).expect(404, "not_found")
	})
}

func TestPetFieldLimits(t *testing.T) {
	a := newTestAPI(t)
	c := a.category(t, "Fish")
	tests := []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"a name of 100 characters is accepted", map[string]any{"name": strings.Repeat("ñ", 100), "categoryId": c.ID}, 201},
		{"a name of 101 characters is refused", map[string]any{"name": strings.Repeat("ñ", 101), "categoryId": c.ID}, 400},
		{"a blank name is refused", map[string]any{"name": "   ", "categoryId": c.ID}, 400},
		{"an empty name is refused", map[string]any{"name": "", "categoryId": c.ID}, 400},
		{"a name with a control character is refused", map[string]any{"name": "Ne\u0007mo", "categoryId": c.ID}, 400},
		{"an unknown status is refused", map[string]any{"name": "Nemo", "categoryId": c.ID, "status": "lost"}, 400},
		{"a missing categoryId is refused", map[string]any{"name": "Nemo"}, 400},
		{"a string categoryId is refused", map[string]any{"name": "Nemo", "categoryId": "1"}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := ""
			if tt.status == 400 {
				code = "validation_failed"
			}
			a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: tt.body}).expect(tt.status, code)
		})
	}
}

func TestManualStatusTransitions(t *testing.T) {
	a := newTestAPI(t)
	tests := []struct {
		from, to string
		allowed  bool
	}{
		{"available", "pending", true},
		{"pending", "available", true},
		{"pending", "sold", true},
		{"available", "sold", true},
		{"sold", "available", true},
		{"sold", "pending", false},
		{"available", "available", true},
		{"sold", "sold", true},
	}
	for _, tt := range tests {
		name := tt.from + " to " + tt.to + " is refused"
		if tt.allowed {
			name = tt.from + " to " + tt.to + " is allowed"
		}
		t.Run(name, func(t *testing.T) {
			c := a.category(t, "c "+tt.from+tt.to)
			var p pet
			a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "p", "categoryId": c.ID, "status": tt.from}}).expect(201, "").JSON(&p)
			res := a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", p.ID), Key: a.Admin, Body: `{"status":"` + tt.to + `"}`, Header: map[string]string{"Content-Type": "application/merge-patch+json"}})
			if tt.allowed {
				res.expect(200, "")
			} else {
				res.expect(409, "invalid_transition")
				var got []pet
				a.do(t, req{Method: "GET", Path: path("/v1/pets?ids=%d", p.ID), Key: a.Admin}).JSON(&got)
				if got[0].Status != tt.from {
					t.Fatalf("a refused change changed the status to %s", got[0].Status)
				}
			}
		})
	}
}

func TestListPetsFiltersAndPagination(t *testing.T) {
	a := newTestAPI(t)
	dogs, cats := a.category(t, "Dogs"), a.category(t, "Cats")
	var ids []int64
	for i := range 7 {
		c, status := dogs, "available"
		if i%2 == 1 {
			c, status = cats, "sold"
		}
		var p pet
		a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "pet " + strconv.Itoa(i), "categoryId": c.ID, "status": status}}).expect(201, "").JSON(&p)
		ids = append(ids, p.ID)
	}

	// walk follows Link rel="next" from the first page and returns every pet seen.
	walk := func(t *testing.T, first string) ([]pet, int) {
		t.Helper()
		var all []pet
		pages := 0
		next := first
		for next != "" {
			res := a.do(t, req{Method: "GET", Path: next, Key: a.Customer}).expect(200, "")
			var page []pet
			res.JSON(&page)
			all = append(all, page...)
			pages++
			next = nextPath(t, res.Header.Get("Link"))
			if pages > 20 {
				t.Fatal("pagination does not end")
			}
		}
		return all, pages
	}

	t.Run("pages of 3 walk all 7 pets in id order", func(t *testing.T) {
		all, pages := walk(t, "/v1/pets?limit=3")
		if pages != 3 || len(all) != 7 {
			t.Fatalf("got %d pets in %d pages", len(all), pages)
		}
		for i, p := range all {
			if p.ID != ids[i] {
				t.Fatalf("pet %d has id %d, want %d", i, p.ID, ids[i])
			}
		}
	})
	t.Run("the next link keeps the filters", func(t *testing.T) {
		all, _ := walk(t, path("/v1/pets?limit=1&status=sold&categoryId=%d", cats.ID))
		if len(all) != 3 {
			t.Fatalf("got %d sold cats, want 3", len(all))
		}
		for _, p := range all {
			if p.Status != "sold" || p.CategoryID != cats.ID {
				t.Fatalf("filter lost: %+v", p)
			}
		}
	})
	t.Run("the last page has no next link", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets?limit=7", Key: a.Customer}).expect(200, "")
		if l := res.Header.Get("Link"); l != "" {
			t.Fatalf("Link = %q on the last page", l)
		}
	})
	t.Run("ids is a batch lookup that skips unknown ids and is not cut to the default page size", func(t *testing.T) {
		var got []pet
		a.do(t, req{Method: "GET", Path: path("/v1/pets?ids=%d,%d,99999", ids[4], ids[0]), Key: a.Customer}).expect(200, "").JSON(&got)
		if len(got) != 2 || got[0].ID != ids[0] || got[1].ID != ids[4] {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("ids may be repeated, comma-separated or both, with one meaning", func(t *testing.T) {
		want := []int64{ids[0], ids[2], ids[4]}
		for _, q := range []string{
			path("ids=%d&ids=%d&ids=%d", ids[4], ids[0], ids[2]),
			path("ids=%d,%d,%d", ids[4], ids[0], ids[2]),
			path("ids=%d,%d&ids=%d", ids[4], ids[0], ids[2]),
			path("ids=%d%%2C%d&status=available&ids=%d", ids[4], ids[0], ids[2]),
			// A pair the query parser drops (a bad escape, a semicolon) is dropped for
			// both spellings alike; it must not keep the commas from being read.
			path("ids=%d,%d&ids=%d&junk=%%zz", ids[4], ids[0], ids[2]),
			path("ids=%d,%d&junk=a;b&ids=%d", ids[4], ids[0], ids[2]),
			// An escaped key is the same key.
			path("%%69ds=%d,%d&ids=%d", ids[4], ids[0], ids[2]),
		} {
			var got []pet
			res := a.do(t, req{Method: "GET", Path: "/v1/pets?" + q + "&limit=2", Key: a.Customer}).expect(200, "")
			res.JSON(&got)
			// The second page, through the next link, must keep all three ids.
			var rest []pet
			a.do(t, req{Method: "GET", Path: nextPath(t, res.Header.Get("Link")), Key: a.Customer}).expect(200, "").JSON(&rest)
			got = append(got, rest...)
			if len(got) != len(want) {
				t.Fatalf("%s: got %+v, want ids %v", q, got, want)
			}
			for i, p := range got {
				if p.ID != want[i] {
					t.Fatalf("%s: got %+v, want ids %v", q, got, want)
				}
			}
		}
	})
	bad := []struct{ name, query string }{
		{"more than 100 ids in both spellings together are refused", "ids=" + strings.Repeat("1,", 60) + "1&ids=" + strings.Repeat("2,", 39) + "2"},
		{"an empty id in a list is refused", "ids=1,,2"},
		{"a non-numeric repeated id is refused", "ids=1&ids=x"},
		{"a limit of 0 is refused", "limit=0"},
		{"a limit of 101 is refused", "limit=101"},
		{"a non-numeric limit is refused", "limit=ten"},
		{"a forged cursor is refused", "cursor=bm90LWEtY3Vyc29y"},
		{"an unknown status is refused", "status=lost"},
		{"more than 100 ids are refused", "ids=" + strings.Repeat("1,", 100) + "1"},
		{"a non-numeric id is refused", "ids=1,x"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			a.do(t, req{Method: "GET", Path: "/v1/pets?" + tt.query, Key: a.Customer}).expect(400, "validation_failed")
		})
	}
}

// A batch lookup of more ids than the default page size answers them all on one page
// when no limit is given, and a limit given still cuts it.
func TestABatchLookupIsNotCutToTheDefaultPageSize(t *testing.T) {
	a := newTestAPI(t)
	c := a.category(t, "Dogs")
	var ids []string
	for i := range petstore.DefaultLimit + 5 {
		var p pet
		a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "pet " + strconv.Itoa(i), "categoryId": c.ID}}).expect(201, "").JSON(&p)
		ids = append(ids, strconv.FormatInt(p.ID, 10))
	}
	for _, tt := range []struct {
		query    string
		want     int
		nextLink bool
	}{
		{"ids=" + strings.Join(ids, ","), len(ids), false},
		{"ids=" + strings.Join(ids, "&ids="), len(ids), false},
		{"ids=" + strings.Join(ids, ",") + "&limit=20", 20, true},
		{"ids=" + strings.Join(ids[:3], ","), 3, false},
	} {
		var got []pet
		res := a.do(t, req{Method: "GET", Path: "/v1/pets?" + tt.query, Key: a.Customer}).expect(200, "")
		res.JSON(&got)
		if len(got) != tt.want || (res.Header.Get("Link") != "") != tt.nextLink {
			t.Errorf("%.40s…: got %d pets, Link %q; want %d, a next link: %v", tt.query, len(got), res.Header.Get("Link"), tt.want, tt.nextLink)
		}
	}
}

// The name filter finds pets by a part of their name in any letter case, on both
// stores alike (the store suite holds the cases; here, what HTTP adds: escaping, the
// other filters, next links and refusals).
func TestListPetsByName(t *testing.T) {
	a := newTestAPI(t)
	dogs, cats := a.category(t, "Dogs"), a.category(t, "Cats")
	mk := func(name string, c category, status string) int64 {
		var p pet
		a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": name, "categoryId": c.ID, "status": status}}).expect(201, "").JSON(&p)
		return p.ID
	}
	eclair := mk("Éclair", dogs, "available")
	rex := mk("Rex", dogs, "available")
	rexine := mk("REXINE", cats, "sold")
	wool := mk("100% Wool", cats, "available")
	plain := mk("100 Wool", dogs, "available")
	under := mk("under_score", dogs, "available")
	mk("underXscore", dogs, "available")
	back := mk(`back\slash`, dogs, "available")
	mk("backslash", dogs, "available")
	petsOf := func(t *testing.T, query string) []int64 {
		t.Helper()
		var got []pet
		a.do(t, req{Method: "GET", Path: "/v1/pets?" + query, Key: a.Customer}).expect(200, "").JSON(&got)
		ids := []int64{}
		for _, p := range got {
			ids = append(ids, p.ID)
		}
		return ids
	}
	for _, tt := range []struct {
		name, query string
		want        []int64
	}{
		{"any letter case", "name=rEX", []int64{rex, rexine}},
		{"non-ASCII letters in upper case", "name=" + url.QueryEscape("ÉC"), []int64{eclair}},
		{"non-ASCII letters in lower case", "name=" + url.QueryEscape("éclair"), []int64{eclair}},
		{"the end of a name", "name=clair", []int64{eclair}},
		{"a percent sign, escaped", "name=0%25%20w", []int64{wool}},
		{"a space as +", "name=0+w", []int64{plain}},
		{"an underscore", "name=r_s", []int64{under}},
		{"a backslash", "name=k%5Cs", []int64{back}},
		{"surrounding white space is trimmed", "name=%20REX%20", []int64{rex, rexine}},
		{"with status", "name=rex&status=sold", []int64{rexine}},
		{"with categoryId", path("name=wool&categoryId=%d", dogs.ID), []int64{plain}},
		{"with ids, in both spellings", path("name=rex&ids=%d,%d&ids=%d", eclair, rexine, rex), []int64{rex, rexine}},
		{"text no name holds", "name=rexx", []int64{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := petsOf(t, tt.query); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s: got %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	t.Run("the next link keeps the name, with every other filter", func(t *testing.T) {
		mk("Bébé", dogs, "available") // of no id asked for
		ecrin := mk("écrin", dogs, "available")
		next := path("/v1/pets?name=%s&status=available&categoryId=%d&ids=%d,%d,%d&limit=1", url.QueryEscape("É"), dogs.ID, eclair, ecrin, wool)
		var seen []int64
		for pages := 0; next != ""; pages++ {
			if pages > 5 {
				t.Fatal("pagination does not end")
			}
			res := a.do(t, req{Method: "GET", Path: next, Key: a.Customer}).expect(200, "")
			var page []pet
			res.JSON(&page)
			for _, p := range page {
				seen = append(seen, p.ID)
			}
			next = nextPath(t, res.Header.Get("Link"))
			if next != "" && !strings.Contains(next, "name="+url.QueryEscape("É")) {
				t.Fatalf("the next link %q lost the name", next)
			}
		}
		if fmt.Sprint(seen) != fmt.Sprint([]int64{eclair, ecrin}) {
			t.Fatalf("walked %v, want %v", seen, []int64{eclair, ecrin})
		}
	})
	for _, tt := range []struct{ name, query, problem string }{
		{"an empty name is refused", "name=", "must be at least 1 character long"},
		{"a name of 101 characters is refused", "name=" + strings.Repeat("é", 101), "must be at most 100 characters long"},
		{"a name of white space only is refused", "name=%20%20", "must be 1 to 100 characters (after trimming white space)"},
		{"a name with NUL is refused", "name=a%00b", "must not contain NUL characters"},
		{"a name that is not UTF-8 is refused", "name=a%FFb", "must be valid UTF-8"},
		{"a name with a control character is refused", "name=a%1Bb", "must not contain control characters"},
		{"a name given twice is refused", "name=a&name=b", "must be given once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := a.do(t, req{Method: "GET", Path: "/v1/pets?" + tt.query, Key: a.Customer}).expect(400, "validation_failed")
			if want := fmt.Sprintf(`{"field":"name","problem":%q}`, tt.problem); !strings.Contains(string(res.Body), want) {
				t.Errorf("details lack %s: %s", want, res.Body)
			}
		})
	}
}

// nextPath extracts the target of a Link rel="next" header, or "".
func nextPath(t *testing.T, link string) string {
	t.Helper()
	if link == "" {
		return ""
	}
	target, rel, ok := strings.Cut(link, ">; ")
	if !ok || rel != `rel="next"` || !strings.HasPrefix(target, "</v1/") {
		t.Fatalf("malformed Link %q", link)
	}
	return strings.TrimPrefix(target, "<")
}

func TestDeprecatedGetPetById(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 0)

	checkHeaders := func(t *testing.T, res *response, id string) {
		t.Helper()
		if d := res.Header.Get("Deprecation"); !strings.HasPrefix(d, "@") {
			t.Errorf("Deprecation = %q", d)
		}
		sunset, err := http.ParseTime(res.Header.Get("Sunset"))
		if err != nil || !sunset.Equal(time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("Sunset = %q, want the document's 2027-06-30", res.Header.Get("Sunset"))
		}
		since, _ := strconv.ParseInt(strings.TrimPrefix(res.Header.Get("Deprecation"), "@"), 10, 64)
		if time.Unix(since, 0).After(sunset) {
			t.Errorf("Deprecation is later than Sunset")
		}
		if l := res.Header.Get("Link"); l != "</v1/pets?ids="+id+`>; rel="successor-version"` {
			t.Errorf("Link = %q", l)
		}
	}
	t.Run("a found pet carries the deprecation headers", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: path("/v1/pets/%d", p.ID), Key: a.Customer}).expect(200, "")
		checkHeaders(t, res, strconv.FormatInt(p.ID, 10))
	})
	t.Run("a 404 carries them too", func(t *testing.T) {
		checkHeaders(t, a.do(t, req{Method: "GET", Path: "/v1/pets/424242", Key: a.Customer}).expect(404, "not_found"), "424242")
	})
	t.Run("a 401 carries them too", func(t *testing.T) {
		checkHeaders(t, a.do(t, req{Method: "GET", Path: "/v1/pets/5"}).expect(401, "unauthorized"), "5")
	})
	t.Run("a non-numeric id is a validation error", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/pets/rex", Key: a.Customer}).expect(400, "validation_failed")
	})
	t.Run("an id beyond int64 is a validation error", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/pets/99999999999999999999", Key: a.Customer}).expect(400, "validation_failed")
	})
}

func TestSunsetAnswersGoneAndTheDocumentShowsTheDate(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.Sunsets = map[string]string{"getPetById": "2020-01-02"} })
	p := a.pet(t, "Rex", 0)
	res := a.do(t, req{Method: "GET", Path: path("/v1/pets/%d", p.ID), Key: a.Customer}).expect(410, "gone")
	if res.Header.Get("Sunset") != "Thu, 02 Jan 2020 00:00:00 GMT" {
		t.Errorf("Sunset = %q", res.Header.Get("Sunset"))
	}
	since, _ := strconv.ParseInt(strings.TrimPrefix(res.Header.Get("Deprecation"), "@"), 10, 64)
	if time.Unix(since, 0).After(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Deprecation %s is later than the sunset", res.Header.Get("Deprecation"))
	}
	a.do(t, req{Method: "GET", Path: path("/v1/pets?ids=%d", p.ID), Key: a.Customer}).expect(200, "")
	doc := a.do(t, req{Method: "GET", Path: "/openapi.yaml"}).expect(200, "")
	if !strings.Contains(string(doc.Body), "x-deprecated-sunset: \"2020-01-02\"") && !strings.Contains(string(doc.Body), "x-deprecated-sunset: '2020-01-02'") {
		t.Errorf("the served document does not show the sunset in effect")
	}
}

func TestCategories(t *testing.T) {
	a := newTestAPI(t)
	var c category
	res := a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: map[string]any{"name": "Dogs", "description": "Loyal."}}).expect(201, "")
	res.JSON(&c)
	if res.Header.Get("Location") != path("/v1/categories/%d", c.ID) || c.Description != "Loyal." {
		t.Fatalf("created %+v at %q", c, res.Header.Get("Location"))
	}
	t.Run("a name taken in another letter case is a conflict", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: map[string]any{"name": "DOGS"}}).expect(409, "conflict")
	})
	t.Run("a description over 500 characters is refused", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: map[string]any{"name": "Long", "description": strings.Repeat("x", 501)}}).expect(400, "validation_failed")
	})
	t.Run("a customer reads categories but cannot change them", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: path("/v1/categories/%d", c.ID), Key: a.Customer}).expect(200, "")
		a.do(t, req{Method: "GET", Path: "/v1/categories", Key: a.Customer}).expect(200, "")
		a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Customer, Body: map[string]any{"name": "Cats"}}).expect(403, "forbidden")
		a.do(t, req{Method: "PUT", Path: path("/v1/categories/%d", c.ID), Key: a.Customer, Body: map[string]any{"name": "Cats"}}).expect(403, "forbidden")
		a.do(t, req{Method: "DELETE", Path: path("/v1/categories/%d", c.ID), Key: a.Customer}).expect(403, "forbidden")
	})
	t.Run("PUT replaces every field", func(t *testing.T) {
		var got category
		a.do(t, req{Method: "PUT", Path: path("/v1/categories/%d", c.ID), Key: a.Admin, Body: map[string]any{"name": "Hounds"}}).expect(200, "").JSON(&got)
		if got.Name != "Hounds" || got.Description != "" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("renaming to another category's name is a conflict", func(t *testing.T) {
		other := a.category(t, "Cats")
		a.do(t, req{Method: "PUT", Path: path("/v1/categories/%d", other.ID), Key: a.Admin, Body: map[string]any{"name": "hounds"}}).expect(409, "conflict")
	})
	t.Run("a category that pets use cannot be deleted", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": c.ID}}).expect(201, "")
		a.do(t, req{Method: "DELETE", Path: path("/v1/categories/%d", c.ID), Key: a.Admin}).expect(409, "conflict")
	})
	t.Run("an unused category is deleted", func(t *testing.T) {
		e := a.category(t, "Empty")
		a.do(t, req{Method: "DELETE", Path: path("/v1/categories/%d", e.ID), Key: a.Admin}).expect(204, "")
		a.do(t, req{Method: "GET", Path: path("/v1/categories/%d", e.ID), Key: a.Admin}).expect(404, "not_found")
	})
}
