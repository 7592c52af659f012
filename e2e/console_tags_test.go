package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/chromedp/chromedp"
)

// A pet's description and tags on the Stock screen: a scenario of TestConsole.

// taggedPetJSON is what the API shows of a pet's description and tags.
type taggedPetJSON struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Description *string  `json:"description"`
	Tags        []string `json:"tags"`
}

// petTagsAndDescription: staff add a pet with a description and tags (the form checked
// with axe, at desktop and phone width), edit its tags (the patch sends only what
// changed; a repeated tag and eleven tags show the service's own message), and find it
// by a tag written in another case; the API shows what the page showed.
func petTagsAndDescription(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	sc.signInAsStaff()
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.wait(`document.querySelector('form.add select[name=categoryId] option') !== null`, "the categories of the form")

	// The limits are the document's, said beside the fields; the description's enforced.
	if got := evalAs[int](b, `document.querySelector('form.add textarea[name=description]').maxLength`); got != 2000 {
		t.Errorf("the description's maxlength is %d, want 2000", got)
	}
	hints := evalAs[string](b, `[...document.querySelectorAll('form.add .hint')].map(h => h.textContent).join(' | ')`)
	for _, want := range []string{"Up to 2,000 characters", "up to 10, each up to 32 characters"} {
		if !strings.Contains(hints, want) {
			t.Errorf("the form does not say %q: %s", want, hints)
		}
	}
	b.do(sendKeys(`form.add input[name=name]`, "Quince"),
		sendKeys(`form.add textarea[name=description]`, "Gentle with cats.\nLoves long naps."))
	if got := evalAs[string](b, `document.querySelector('form.add .char-count').textContent`); got != "34 / 2,000" {
		t.Errorf("the description's count says %q, want 34 / 2,000", got)
	}
	b.do(sendKeys(`form.add input[name=tags]`, " Calm, house-trained , ,Lap dog"))
	b.checkAccessibility(sc.axe, "add a pet, with a description and tags")
	b.screenshot("console-pet-tags-add.png")
	b.do(chromedp.KeyEvent("\r"))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent.startsWith('Added Quince')`, "the new pet")
	b.wait(stockRow("Quince")+` !== undefined`, "the new pet's row")
	id := evalAs[int64](b, `Number(`+stockRow("Quince")+`.dataset.petId)`)
	rowTags := func() []string {
		return evalAs[[]string](b, `[...`+stockRow("Quince")+`.querySelectorAll('ul.tags li')].map(li => li.textContent)`)
	}
	if got, want := rowTags(), []string{"Calm", "house-trained", "Lap dog"}; !slices.Equal(got, want) {
		t.Errorf("the row shows the tags %q, want %q", got, want)
	}
	if got := evalAs[string](b, stockRow("Quince")+`.querySelector('.pet-description')?.textContent ?? ''`); got != "Gentle with cats.\nLoves long naps." {
		t.Errorf("the row shows the description %q", got)
	}
	if form := evalAs[string](b, `document.querySelector('form.add input[name=tags]').value + document.querySelector('form.add textarea').value + document.querySelector('form.add .char-count').textContent`); form != "0 / 2,000" {
		t.Errorf("the form was not emptied after adding: %q", form)
	}

	// Edit the tags: the refusals first, each the service's own words.
	patches := recordPatches(b)
	openEditor(b, "Quince")
	for _, tags := range [][]string{{"Calm", "CALM"}, strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")} {
		var refusal struct{ Message string }
		srv.call(t, srv.AdminKey, "PATCH", fmt.Sprintf("/pets/%d", id), map[string]any{"tags": tags}, http.StatusBadRequest, &refusal)
		setValue(b, `form.edit input[name=tags]`, strings.Join(tags, ", "))
		b.do(chromedp.Click(chromedp.CSS(`form.edit button[type=submit]`)))
		b.wait(fmt.Sprintf(`document.querySelector('.notice.error')?.textContent.startsWith(%q)`, refusal.Message), "the service's refusal of "+strings.Join(tags, ","))
		b.wait(`document.activeElement === document.querySelector('form.edit input[name=tags]') && document.activeElement.getAttribute('aria-invalid') === 'true'`, "the tags field marked and focused")
	}
	setValue(b, `form.edit input[name=tags]`, "calm, Lap dog, senior")
	b.do(chromedp.Click(chromedp.CSS(`form.edit button[type=submit]`)))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Saved Quince.'`, "the edit")
	if got, want := rowTags(), []string{"calm", "Lap dog", "senior"}; !slices.Equal(got, want) {
		t.Errorf("after the edit the row shows %q, want %q", got, want)
	}
	// The description was left as it was: the patch does not send it.
	if sent := evalAs[[]string](b, patches); len(sent) != 3 || !patchHas(t, sent[2], "tags") || patchHas(t, sent[2], "description") || patchHas(t, sent[2], "price") {
		t.Errorf("the patches sent: %q; want the last with the tags and without description or price", sent)
	}

	// Find it by a tag in another case, with another of its tags: both must hold.
	setValue(b, `form.filters input[name=tag]`, " LAP DOG, Senior ")
	b.wait(`[...document.querySelectorAll('tr[data-pet-id]')].length === 1 && `+stockRow("Quince")+` !== undefined && !document.querySelector('main .pager .count').textContent.startsWith('Loading')`, "the tag filter to find Quince alone")
	if sent := lastTagFilter(b); !slices.Equal(queryValues(t, sent, "tag"), []string{"LAP DOG", "Senior"}) {
		t.Errorf("the filter sent %q, want tag=LAP DOG&tag=Senior", sent)
	}
	setValue(b, `form.filters input[name=tag]`, "lap dog, house-trained")
	b.wait(`document.querySelector('main .pager .count').textContent === 'No pets.'`, "no pet with both tags")

	var pets []taggedPetJSON
	srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/pets?ids=%d", id), nil, http.StatusOK, &pets)
	if len(pets) != 1 || pets[0].Description == nil || *pets[0].Description != "Gentle with cats.\nLoves long naps." || !slices.Equal(pets[0].Tags, []string{"calm", "Lap dog", "senior"}) {
		t.Errorf("the API shows %+v", pets)
	}

	// An emptied description is removed (null), and the tags left as they were are not sent.
	setValue(b, `form.filters input[name=tag]`, "senior")
	b.wait(stockRow("Quince")+` !== undefined && !document.querySelector('main .pager .count').textContent.startsWith('Loading')`, "Quince again")
	openEditor(b, "Quince")
	setValue(b, `form.edit textarea[name=description]`, "")
	b.do(chromedp.Click(chromedp.CSS(`form.edit button[type=submit]`)))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Saved Quince.' && !`+stockRow("Quince")+`.querySelector('.pet-description')`, "the description removed")
	if sent := evalAs[[]string](b, patches); len(sent) != 4 || !strings.Contains(sent[3], `"description":null`) || patchHas(t, sent[3], "tags") {
		t.Errorf("the patches sent: %q; want the last with description null and without tags", sent)
	}
	var after []taggedPetJSON // a fresh value: decoding keeps the fields an answer leaves out
	srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/pets?ids=%d", id), nil, http.StatusOK, &after)
	if len(after) != 1 || after[0].Description != nil || len(after[0].Tags) != 3 {
		t.Errorf("after removing the description the API shows %+v", after)
	}

	// The form at a phone's width: it fits, and axe finds nothing serious.
	b.do(chromedp.EmulateViewport(375, 812))
	openEditor(b, "Quince")
	evalAs[bool](b, `(document.querySelector('form.edit').scrollIntoView({block: 'center'}), true)`)
	fitsPhone(b, "a pet's edit form")
	b.checkAccessibility(sc.axe, "edit a pet, phone")
	b.screenshot("console-pet-tags-edit-phone.png")
	b.do(chromedp.EmulateViewport(1280, 900))
}

// openEditor presses a pet's Edit and waits for its form.
func openEditor(b *browser, name string) {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(b.mark(stockRow(name)+`.querySelector('button[aria-expanded]')`, "edit"))))
	b.wait(`document.querySelector('form.edit input[name=tags]') !== null`, "the edit form of "+name)
}

// lastTagFilter is the URL of the last list of pets the page asked for by tag ("" when none).
func lastTagFilter(b *browser) string {
	reqs := b.allRequests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if r := reqs[i]; r.Method == "GET" && strings.Contains(r.URL, "/v1/pets?") && strings.Contains(r.URL, "tag=") {
			return r.URL
		}
	}
	return ""
}

// setValue puts text in a field at once, with one input event (see scene.search).
func setValue(b *browser, selector, text string) {
	b.t.Helper()
	evalAs[bool](b, fmt.Sprintf(`(() => { const f = document.querySelector(%q); f.value = %q; f.dispatchEvent(new Event('input', {bubbles: true})); return true })()`, selector, text))
}

// recordPatches keeps the body of every PATCH the page sends from now on; the returned
// expression reads them.
func recordPatches(b *browser) string {
	b.t.Helper()
	evalAs[bool](b, `(() => {
		__e2e.patches = [];
		const fetch = window.fetch;
		window.fetch = (input, init) => {
			if (input instanceof Request && input.method === 'PATCH') __e2e.patches.push(input.clone().text());
			return fetch(input, init);
		};
		return true;
	})()`)
	return `Promise.all(__e2e.patches)`
}

// patchHas reports whether a JSON body has the member name.
func patchHas(t interface{ Fatalf(string, ...any) }, body, name string) bool {
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &members); err != nil {
		t.Fatalf("a patch that is not a JSON object: %q", body)
	}
	_, ok := members[name]
	return ok
}

// queryValues reads one parameter's values of a request's URL.
func queryValues(t interface{ Fatalf(string, ...any) }, raw, name string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return u.Query()[name]
}
