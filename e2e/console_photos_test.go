package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/chromedp/chromedp"

	"github.com/acme-pets/petstore/internal/media/phototest"
)

// A pet's photos on the Stock screen: a scenario of TestConsole.

// photoIDsOnPage is the expression of the photo ids the open edit row shows, in order.
const photoIDsOnPage = `[...document.querySelectorAll('ol.photos li')].map(li => li.dataset.photoId)`

// petPhotos: staff add two photos to a pet through the file input (both sent, one after
// the other), see both thumbnails load, move the second first with its button, and
// remove one after the confirmation; a file the service cannot read shows its refusal.
// After each step the API holds the order the page shows; axe checks the group at
// desktop and phone width.
func petPhotos(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	pet := sc.pet(fmt.Sprintf("Pip %d", sc.scenes.Load()), 1)
	petID := strconv.FormatInt(pet.ID, 10)
	dir := t.TempDir()
	files := map[string][]byte{
		"first.png":  phototest.PNG(t, 640, 480),
		"second.jpg": phototest.JPEG(t, 300, 500),
		// Named a PNG (so the browser sends image/png), but a GIF: the service's 415.
		"not-really.png": phototest.GIF(t, 20, 20),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	apiPhotos := func() []string {
		t.Helper()
		var p struct{ Photos []struct{ ID string } }
		srv.call(t, srv.AdminKey, "GET", "/pets/"+petID, nil, http.StatusOK, &p)
		ids := make([]string, len(p.Photos))
		for i, ph := range p.Photos {
			ids[i] = ph.ID
		}
		return ids
	}
	agree := func(step string, count int) []string {
		t.Helper()
		shown := evalAs[[]string](b, photoIDsOnPage)
		if api := apiPhotos(); len(shown) != count || !slices.Equal(shown, api) {
			t.Fatalf("%s: the page shows the photos %q, the API holds %q; want %d", step, shown, api, count)
		}
		return shown
	}

	sc.signInAsStaff()
	sc.findPet(pet.Name)
	openEditor(b, pet.Name)
	b.wait(`document.querySelector('fieldset.photos input[type=file]') !== null`, "the photos group")
	if got := evalAs[string](b, `document.querySelector('fieldset.photos input[type=file]').accept`); got != "image/jpeg,image/png,image/webp" {
		t.Errorf("the file input accepts %q", got)
	}
	agree("before any upload", 0)

	// Two files at once: sent one after the other, in the order chosen.
	b.do(chromedp.SetUploadFiles(`fieldset.photos input[type=file]`, []string{filepath.Join(dir, "first.png"), filepath.Join(dir, "second.jpg")}))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Added 2 photos of `+pet.Name+`.'`, "both uploads")
	b.wait(`(() => { const imgs = [...document.querySelectorAll('ol.photos img')]; return imgs.length === 2 && imgs.every(i => i.complete && i.naturalWidth > 0) })()`, "both thumbnails to load")
	uploaded := agree("after the uploads", 2)
	if alts := evalAs[[]string](b, `[...document.querySelectorAll('ol.photos img')].map(i => i.alt)`); !slices.Equal(alts, []string{"Photo 1 of " + pet.Name, "Photo 2 of " + pet.Name}) {
		t.Errorf("the thumbnails' alt texts: %q", alts)
	}
	// Its row shows the first photo beside its name.
	b.wait(stockRow(pet.Name)+`.querySelector('img.row-thumb')?.naturalWidth > 0`, "the row's thumbnail")
	if !evalAs[bool](b, stockRow(pet.Name)+`.querySelector('img.row-thumb').src.endsWith('/v1/photos/' + `+strconv.Quote(uploaded[0])+` + '/thumb')`) {
		t.Errorf("the row's thumbnail is not the first photo's")
	}
	b.checkAccessibility(sc.axe, "a pet's photos")
	b.screenshot("console-pet-photos.png")

	// The second first, by its button and the keyboard alone; focus stays on the photo moved.
	b.do(chromedp.Focus(`ol.photos li:nth-child(2) button[data-action=earlier]`), chromedp.KeyEvent("\r"))
	b.wait(fmt.Sprintf(`JSON.stringify(%s) === %q`, photoIDsOnPage, mustJSON(t, []string{uploaded[1], uploaded[0]})), "the second photo first")
	agree("after moving the second first", 2)
	if !evalAs[bool](b, `document.activeElement?.closest('li')?.dataset.photoId === `+strconv.Quote(uploaded[1])) {
		t.Errorf("focus left the photo moved: %s", evalAs[string](b, `document.activeElement?.outerHTML ?? ''`))
	}
	b.wait(stockRow(pet.Name)+`.querySelector('img.row-thumb')?.src.includes(`+strconv.Quote(uploaded[1])+`)`, "the row's thumbnail to follow the order")

	// A file the service cannot read: its refusal is shown, and nothing is added.
	refusal := rawUpload(t, srv, petID, "image/png", files["not-really.png"], http.StatusUnsupportedMediaType)
	b.do(chromedp.SetUploadFiles(`fieldset.photos input[type=file]`, []string{filepath.Join(dir, "not-really.png")}))
	b.wait(fmt.Sprintf(`document.querySelector('.notice.error')?.textContent.startsWith(%q)`, refusal), "the service's 415")
	b.wait(`document.querySelector('.photo-progress').textContent === 'not-really.png was not added.'`, "which file was refused")
	agree("after the refused file", 2)

	// Remove the one now second, after the confirmation.
	b.do(chromedp.Click(chromedp.CSS(`ol.photos li:nth-child(2) button[data-action=remove]`)))
	b.wait(`document.querySelector('dialog.confirm[open]') !== null`, "the confirmation")
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(fmt.Sprintf(`JSON.stringify(%s) === %q`, photoIDsOnPage, mustJSON(t, []string{uploaded[1]})), "one photo left")
	agree("after removing one", 1)

	// At a phone's width the group fits and axe finds nothing serious.
	b.do(chromedp.EmulateViewport(375, 812))
	evalAs[bool](b, `(document.querySelector('fieldset.photos').scrollIntoView({block: 'center'}), true)`)
	fitsPhone(b, "a pet's photos")
	b.checkAccessibility(sc.axe, "a pet's photos, phone")
	b.screenshot("console-pet-photos-phone.png")
	b.do(chromedp.EmulateViewport(1280, 900))
}

// rawUpload posts body as a photo of the pet with the admin key, expects status, and
// returns the service's message.
func rawUpload(t interface {
	Helper()
	Fatalf(string, ...any)
}, srv *server, petID, contentType string, body []byte, status int) string {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/v1/pets/"+petID+"/photos", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%v", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+srv.AdminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer res.Body.Close()
	var answer struct{ Message string }
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil || res.StatusCode != status || answer.Message == "" {
		t.Fatalf("upload %s: %d %q (%v), want %d with a message", contentType, res.StatusCode, answer.Message, err, status)
	}
	return answer.Message
}

// mustJSON is v as JSON.
func mustJSON(t interface{ Fatalf(string, ...any) }, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return string(data)
}
