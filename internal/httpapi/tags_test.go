package httpapi_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// taggedPet is what these tests read of a pet.
type taggedPet struct {
	ID          int64    `json:"id"`
	Description *string  `json:"description"`
	Tags        []string `json:"tags"`
}

func TestPetDescriptionAndTags(t *testing.T) {
	a := newTestAPI(t)
	dogs := a.category(t, "Dogs")
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}

	var rex taggedPet
	a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": dogs.ID,
		"description": "Calm.\nHouse-trained.", "tags": []string{" Calm ", "small"}}}).expect(201, "").JSON(&rex)
	if rex.Description == nil || *rex.Description != "Calm.\nHouse-trained." || !slices.Equal(rex.Tags, []string{"Calm", "small"}) {
		t.Fatalf("created %+v", rex)
	}
	var plain taggedPet
	a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "Plain", "categoryId": dogs.ID}}).expect(201, "").JSON(&plain)
	if plain.Description != nil || plain.Tags == nil || len(plain.Tags) != 0 {
		t.Errorf("a pet without them shows no description and an empty list of tags: %+v", plain)
	}

	t.Run("the tag filter finds pets with every tag, in any case, and its next link keeps it", func(t *testing.T) {
		var got []taggedPet
		a.do(t, req{Method: "GET", Path: "/v1/pets?tag=CALM&tag=Small", Key: a.Customer}).expect(200, "").JSON(&got)
		if len(got) != 1 || got[0].ID != rex.ID {
			t.Fatalf("got %+v", got)
		}
		a.do(t, req{Method: "GET", Path: "/v1/pets?tag=calm&tag=senior", Key: a.Customer}).expect(200, "").JSON(&got)
		if len(got) != 0 {
			t.Fatalf("a tag the pet lacks: got %+v", got)
		}
		var more taggedPet
		a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": "Max", "categoryId": dogs.ID, "tags": []string{"calm"}}}).expect(201, "").JSON(&more)
		res := a.do(t, req{Method: "GET", Path: "/v1/pets?tag=calm&limit=1", Key: a.Customer}).expect(200, "")
		link := res.Header.Get("Link")
		if !strings.Contains(link, "tag=calm") {
			t.Fatalf("the next link %q lost the tag", link)
		}
		next, _ := url.Parse(strings.Trim(strings.SplitN(link, ";", 2)[0], "<>"))
		a.do(t, req{Method: "GET", Path: next.RequestURI(), Key: a.Customer}).expect(200, "").JSON(&got)
		if len(got) != 1 || got[0].ID != more.ID {
			t.Fatalf("the next page holds %+v, want pet %d", got, more.ID)
		}
	})
	t.Run("PUT without them keeps them, as a client written before them expects", func(t *testing.T) {
		var p taggedPet
		a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": dogs.ID}}).expect(200, "").JSON(&p)
		if p.Description == nil || !slices.Equal(p.Tags, rex.Tags) {
			t.Fatalf("got %+v", p)
		}
		var cleared taggedPet // a fresh value: decoding keeps fields the answer leaves out
		a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Body: map[string]any{"name": "Rex", "categoryId": dogs.ID, "tags": []string{}, "description": ""}}).expect(200, "").JSON(&cleared)
		if cleared.Description != nil || len(cleared.Tags) != 0 {
			t.Fatalf("empty ones remove them: got %+v", cleared)
		}
	})
	t.Run("PATCH sets them, and null removes them", func(t *testing.T) {
		var p taggedPet
		a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Header: merge, Body: `{"tags":["senior"],"description":"Old."}`}).expect(200, "").JSON(&p)
		if p.Description == nil || *p.Description != "Old." || !slices.Equal(p.Tags, []string{"senior"}) {
			t.Fatalf("got %+v", p)
		}
		a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Header: merge, Body: `{"name":"Rex"}`}).expect(200, "").JSON(&p)
		if p.Description == nil || len(p.Tags) != 1 {
			t.Fatalf("a patch without them changed them: %+v", p)
		}
		var cleared taggedPet
		a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", rex.ID), Key: a.Admin, Header: merge, Body: `{"tags":null,"description":null}`}).expect(200, "").JSON(&cleared)
		if cleared.Description != nil || len(cleared.Tags) != 0 {
			t.Fatalf("null kept them: %+v", cleared)
		}
	})
	t.Run("bad ones are refused with a detail naming the field, and change nothing", func(t *testing.T) {
		tests := []struct{ name, body, field string }{
			{"a repeated tag", `{"tags":["calm","CALM"]}`, "tags[1]"},
			{"eleven tags", `{"tags":["a","b","c","d","e","f","g","h","i","j","k"]}`, "tags"},
			{"a tag too long", `{"tags":["` + strings.Repeat("x", 33) + `"]}`, "tags[0]"},
			{"an empty tag", `{"tags":["  "]}`, "tags[0]"},
			{"a tag that is not a string", `{"tags":[1]}`, ""},
			{"a description too long", `{"description":"` + strings.Repeat("y", 2001) + `"}`, "description"},
			{"a description with an escape character", `{"description":"a\u001bb"}`, "description"},
		}
		for _, tt := range tests {
			res := a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", plain.ID), Key: a.Admin, Header: merge, Body: tt.body}).expect(400, "")
			if tt.field != "" && !strings.Contains(string(res.Body), `"field":"`+tt.field+`"`) {
				t.Errorf("%s: %s", tt.name, res.Body)
			}
		}
		for _, q := range []string{"tag=" + strings.Repeat("x", 33), "tag=%20", strings.Repeat("tag=a&", 11) + "limit=1"} {
			a.do(t, req{Method: "GET", Path: "/v1/pets?" + q, Key: a.Customer}).expect(400, "validation_failed")
		}
		var p taggedPet
		a.do(t, req{Method: "GET", Path: path("/v1/pets/%d", plain.ID), Key: a.Admin}).expect(200, "").JSON(&p)
		if p.Description != nil || len(p.Tags) != 0 {
			t.Errorf("a refused change changed the pet: %+v", p)
		}
	})
}
