package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumFlags are the only switches the browser gets (chromedp adds its pipe and a
// temporary profile): headless, and nothing that reaches the network on its own.
var chromiumFlags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-background-networking",
	"disable-component-update", "disable-sync", "no-first-run",
}

// outputDir is where the screenshots go (git-ignored).
const outputDir = "test-output"

// TestDocsPage opens /docs in headless Chromium as a new reader would and checks what
// the issue asks of it: every operation grouped by tag, the deprecation notice with the
// sunset date in effect, the beta and experimental badges, the three sample languages,
// try-it on GET /pets with a pasted key answering 200, and no try-it at all for
// GET /store/orders (x-hideTryItPanel), even when the API client window is driven to
// it. It also checks that the page loads nothing from another origin and breaks no
// rule of its Content-Security-Policy. Screenshots are saved in e2e/test-output/.
func TestDocsPage(t *testing.T) {
	chromium := findChromium(t)
	const sunset = "2027-07-15" // not the document's default, to see the date in effect
	srv := startServer(t, "--sunset", "getPetById="+sunset)
	doc := srv.document(t)
	if err := os.MkdirAll(outputDir, 0o755); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, chromium)
	b.do(chromedp.EmulateViewport(1400, 1000), chromedp.Navigate(srv.URL+"/docs"))
	b.wait(`document.querySelectorAll('[data-sidebar-id*="/tag/"]').length > 0`, "the reference to render")
	b.screenshot("docs.png")

	t.Run("every operation is listed under its tag", func(t *testing.T) {
		b := b.in(t)
		ops := documentOperations(t, doc)
		var missing []string
		for _, op := range ops {
			tag := strings.ToLower(operationTag(doc, op))
			suffix := "/tag/" + tag + "/" + op.Method + op.Path
			if !evalAs[bool](b, fmt.Sprintf(`!!document.querySelector('[data-sidebar-id$=%q]') && !!document.querySelector('[id$=%q]')`, suffix, suffix)) {
				missing = append(missing, op.ID+" under "+tag)
			}
		}
		if len(missing) > 0 {
			t.Errorf("operations missing from the page: %v", missing)
		}
		groups := evalAs[[]string](b, `[...document.querySelectorAll('.t-doc__sidebar [data-sidebar-id], [data-sidebar-id]')]
			.map(e => e.dataset.sidebarId).filter(id => /\/tag\/[^/]+$/.test(id)).map(id => id.split('/').pop())
			.filter((v, i, a) => a.indexOf(v) === i)`)
		if want := []string{"pets", "store", "platform", "webhooks", "events"}; !slices.Equal(groups, want) {
			t.Errorf("tag groups are %v, want %v", groups, want)
		}
	})

	t.Run("an operation shows its parameters, body, responses and examples", func(t *testing.T) {
		b := b.in(t)
		text := b.sectionText("/POST/store/orders")
		for _, want := range []string{"Place an order", "Idempotency-Key", "Body", "petId", "quantity", "shipDate", "201", "409", `"complete": false`} {
			if !strings.Contains(text, want) {
				t.Errorf("the placeOrder section lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("the Webhooks section and an event's example are shown", func(t *testing.T) {
		b := b.in(t)
		if !evalAs[bool](b, `document.body.innerText.includes('Petstore-Signature: t=<unix seconds>,v1=')`) {
			t.Error("the introduction does not show the Webhooks section's signature scheme")
		}
		text := b.sectionText("/GET/events/{eventId}")
		for _, want := range []string{"Find an event by id", "eventId", `"type": "order.placed"`, `"data": {`, `"accountId": 2`} {
			if !strings.Contains(text, want) {
				t.Errorf("the getEvent section lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("getPetById shows the deprecation and its sunset date", func(t *testing.T) {
		b := b.in(t)
		text := b.sectionText("/GET/pets/{petId}")
		b.scrollTo("/GET/pets/{petId}")
		for _, want := range []string{"deprecated", "sunset " + sunset, "will be removed on " + sunset} {
			if !strings.Contains(strings.ToLower(text), want) {
				t.Errorf("the getPetById section lacks %q:\n%s", want, text)
			}
		}
		b.screenshot("docs-deprecated.png")
	})

	t.Run("stability badges", func(t *testing.T) {
		b := b.in(t)
		for suffix, want := range map[string]string{"/PUT/store/inventory/{petId}": "beta", "/GET/store/orders": "experimental"} {
			badges := evalAs[[]string](b, fmt.Sprintf(`__e2e.section(%q).then(s => [...s.querySelectorAll('.badge')].map(e => e.innerText.trim().toLowerCase()))`, suffix))
			if !slices.Contains(badges, want) {
				t.Errorf("%s has the badges %v, want %q", suffix, badges, want)
			}
		}
	})

	t.Run("at 1280 px nothing covers the auth badge or a status tab", func(t *testing.T) {
		b := b.in(t)
		b.do(chromedp.EmulateViewport(1280, 800))
		defer b.do(chromedp.EmulateViewport(1400, 1000))
		b.scrollToTop()
		b.settle()
		// The Authentication card's header: the "Required" badge is inside its title
		// (which clips) and clear of the auth type picker.
		auth := evalAs[string](b, `(() => {
			const badge = document.querySelector('[data-testid="auth-indicator"]');
			const title = badge?.closest('button');
			const picker = title?.parentElement?.querySelector(':scope > div button');
			if (!badge || !title || !picker) return 'the Authentication header is not found';
			return __e2e.overlap(badge, title, [picker]);
		})()`)
		if auth != "" {
			t.Errorf("the Authentication header: %s", auth)
		}
		b.screenshot("docs-1280.png")
		// placeOrder's response examples: every status tab is in view, clear of the copy
		// button and the Show Schema switch.
		tabs := evalAs[string](b, `__e2e.section("/POST/store/orders").then(s => {
			const list = s.querySelector('[role=tablist]');
			const header = list?.closest('.scalar-card-header');
			if (!header) return 'the response examples are not found';
			const actions = [...header.querySelectorAll('.code-copy, .scalar-card-checkbox')];
			return [...list.querySelectorAll('[role=tab]')].map(tab => __e2e.overlap(tab, header, actions)).filter(Boolean).join('; ');
		})`)
		if tabs != "" {
			b.scrollTo("/POST/store/orders")
			b.screenshot("docs-1280-tabs.png")
			t.Errorf("placeOrder's status tabs (see %s/docs-1280-tabs.png): %s", outputDir, tabs)
		}
	})

	t.Run("code samples in cURL, JavaScript and Python", func(t *testing.T) {
		b := b.in(t)
		b.sectionText("/GET/pets")
		picker := `__e2e.section("/GET/pets").then(s => s.querySelector('[data-testid="client-picker"]'))`
		const optionsShown = `[...document.querySelectorAll('[role=option]')].some(__e2e.visible)`
		// openPicker clicks the picker until its list shows (a click during the closing
		// animation of the list is lost).
		openPicker := func() {
			for range 5 {
				b.do(chromedp.Click(chromedp.CSS(b.mark(picker, "picker"))))
				if b.holds(optionsShown, 2*time.Second) {
					return
				}
			}
			b.screenshot("failure.png")
			t.Fatalf("the sample picker of listPets does not open; see %s/failure.png", outputDir)
		}
		openPicker()
		labels := evalAs[[]string](b, `[...document.querySelectorAll('[role=option]')].map(e => e.innerText.trim())`)
		if want := []string{"cURL", "JavaScript", "Python"}; !slices.Equal(labels, want) {
			t.Fatalf("the sample picker offers %v, want %v", labels, want)
		}
		for i, c := range []struct{ label, want string }{{"JavaScript", "await fetch("}, {"Python", "import requests"}, {"cURL", "curl -sS"}} {
			if i > 0 {
				b.wait(`!`+optionsShown, "the sample picker to close")
				openPicker()
			}
			option := fmt.Sprintf(`[...document.querySelectorAll('[role=option]')].find(e => e.innerText.trim() === %q)`, c.label)
			shown := fmt.Sprintf(`__e2e.section("/GET/pets").then(s => (s.querySelector('code.hljs')?.innerText ?? '').includes(%q))`, c.want)
			// A click on an option can be lost too (on a loaded machine the list may still
			// be settling): click again, reopening the list if it closed, before giving up.
			for try := 0; try < 4 && !b.holds(shown, 300*time.Millisecond); try++ {
				if try > 0 && !b.holds(optionsShown, 300*time.Millisecond) {
					openPicker()
				}
				b.do(chromedp.Click(chromedp.CSS(b.mark(option, "option"))))
				if b.holds(shown, 5*time.Second) {
					break
				}
			}
			b.wait(shown, "the "+c.label+" sample of listPets")
		}
	})

	t.Run("GET /store/orders offers no try-it", func(t *testing.T) {
		b := b.in(t)
		text := b.sectionText("/GET/store/orders")
		if !strings.Contains(text, "Try-it is turned off") {
			t.Errorf("the listOrders section does not say that try-it is off:\n%s", text)
		}
		if evalAs[bool](b, `__e2e.section("/GET/store/orders").then(s => [...s.querySelectorAll('.show-api-client-button')].some(__e2e.visible))`) {
			t.Error("listOrders shows a Test Request button")
		}
		if !evalAs[bool](b, `__e2e.section("/POST/store/orders").then(s => [...s.querySelectorAll('.show-api-client-button')].some(__e2e.visible))`) {
			t.Error("placeOrder shows no Test Request button, so this check proves nothing")
		}
		b.scrollTo("/GET/store/orders")
		b.screenshot("docs-no-try-it.png")
	})

	t.Run("try-it on GET /pets with a pasted key answers 200", func(t *testing.T) {
		b := b.in(t)
		b.scrollToTop()
		b.do(sendKeys(chromedp.CSS(`input[placeholder="Token"]`), srv.CustomerKey))
		b.do(chromedp.Click(chromedp.CSS(b.mark(`__e2e.section("/GET/pets").then(s => s.querySelector('.show-api-client-button'))`, "test-request"))))
		b.wait(`!!`+clientWindow, "the API client window to open")
		b.do(chromedp.Click(chromedp.CSS(b.mark(sendButton, "send"))))
		sent := b.waitRequest("GET", "/v1/pets")
		if got := sent.header("Authorization"); got != "Bearer "+srv.CustomerKey {
			t.Errorf("try-it sent Authorization %q, want the pasted key", got)
		}
		if sent.Status != 200 {
			t.Errorf("try-it GET /v1/pets got %d, want 200", sent.Status)
		}
		b.wait(`/\b200 OK\b/.test(`+clientWindow+`.innerText) && `+clientWindow+`.innerText.includes('"categoryId"')`, "the client to show the 200 response")
		b.settle()
		b.screenshot("docs-try-it.png")
	})

	t.Run("the API client window cannot send GET /store/orders either", func(t *testing.T) {
		b := b.in(t)
		if !evalAs[bool](b, `!!`+clientWindow) {
			t.Skip("the API client window is not open")
		}
		// The client's own list of operations does not offer it…
		if !evalAs[bool](b, `__e2e.visible(`+clientWindow+`.querySelector('[data-sidebar-id$="/tag/store"]'))`) {
			b.do(chromedp.Click(chromedp.CSS(`.scalar-client[role="dialog"] .scalar-sidebar-toggle`)))
		}
		if evalAs[bool](b, `!__e2e.visible(`+clientWindow+`.querySelector('[data-sidebar-id$="/POST/store/orders"]'))`) {
			b.do(chromedp.Click(chromedp.CSS(b.mark(clientWindow+`.querySelector('[data-sidebar-id$="/tag/store"] button')`, "store-group"))))
		}
		b.wait(`__e2e.visible(`+clientWindow+`.querySelector('[data-sidebar-id$="/POST/store/orders"]'))`, "the client's sidebar to list the Store operations")
		if evalAs[bool](b, `__e2e.visible(`+clientWindow+`.querySelector('[data-sidebar-id$="/GET/store/orders"]'))`) {
			t.Error("the API client's sidebar offers GET /store/orders")
		}
		// …and forced into view and chosen anyway, Send sends nothing.
		b.do(chromedp.Click(chromedp.CSS(b.mark(`(() => {
			const li = `+clientWindow+`.querySelector('[data-sidebar-id$="/GET/store/orders"]');
			li.style.setProperty('display', 'flex', 'important');
			return li.querySelector('button');
		})()`, "hidden-entry"))))
		b.wait(`/^Send get request to .*\/v1\/store\/orders$/.test((`+sendButton+`)?.querySelector('.sr-only')?.textContent.trim())`, "the client to show GET /store/orders")
		b.do(chromedp.Click(chromedp.CSS(b.mark(sendButton, "send"))))
		b.wait(`document.body.innerText.includes('Try-it is turned off for GET /store/orders')`, "the refusal to show")
		b.settle()
		b.screenshot("docs-try-it-refused.png")
		if r, ok := b.request("GET", "/v1/store/orders"); ok {
			t.Errorf("the page sent %s %s", r.Method, r.URL)
		}
	})

	t.Run("the page's fetch refuses GET /store/orders however it is spelt", func(t *testing.T) {
		b := b.in(t)
		for _, path := range []string{"/v1/store/orders", "/v1/store/orders?complete=false", "/v1/store/orders/", "/v1//store/orders", "/v1/store/%6Frders", "/v1/pets/..%2Fstore%2Forders", "/v1/./store/orders"} {
			msg := evalAs[string](b, fmt.Sprintf(`window.fetch(%q, {headers: {Authorization: 'Bearer x'}}).then(() => 'sent', e => e.message)`, path))
			if !strings.Contains(msg, "Try-it is turned off") {
				t.Errorf("fetch(%q) was not refused: %s", path, msg)
			}
		}
		if msg := evalAs[string](b, `window.fetch('/v1/store/orders', {method: 'POST'}).then(r => String(r.status), e => e.message)`); msg != "401" {
			t.Errorf("POST /v1/store/orders (placeOrder, which has try-it) answered %q, want it sent and answered 401", msg)
		}
		if r, ok := b.request("GET", "/v1/store/orders"); ok {
			t.Errorf("the page sent %s %s", r.Method, r.URL)
		}
	})

	t.Run("nothing comes from another origin", func(t *testing.T) {
		b := b.in(t)
		for _, r := range b.allRequests() {
			if !strings.HasPrefix(r.URL, srv.URL+"/") && !strings.HasPrefix(r.URL, "data:") && !strings.HasPrefix(r.URL, "blob:") {
				t.Errorf("the page requested %s %s", r.Method, r.URL)
			}
		}
	})

	t.Run("no Content-Security-Policy violation", func(t *testing.T) {
		b := b.in(t)
		// The bundle's validator (zod) probes whether eval works with Function("") and
		// falls back when it does not: that one refusal is expected.
		violations := evalAs[[]string](b, `__e2e.csp.filter(v => !(v.directive === 'script-src' && v.blocked === 'eval')).map(v => JSON.stringify(v))`)
		for _, v := range violations {
			t.Errorf("CSP violation: %s", v)
		}
		for _, e := range b.exceptionTexts() {
			t.Errorf("uncaught exception in the page: %s", e)
		}
	})
}

func findChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	needTool(t, "chromium", "is not installed (Debian: apt-get install chromium)")
	return ""
}

// operationTag is the first tag of an operation in the decoded document.
func operationTag(doc map[string]any, op operation) string {
	paths, _ := doc["paths"].(map[string]any)
	item, _ := paths[op.Path].(map[string]any)
	o, _ := item[strings.ToLower(op.Method)].(map[string]any)
	tags, _ := o["tags"].([]any)
	if len(tags) == 0 {
		return ""
	}
	s, _ := tags[0].(string)
	return s
}

// clientWindow is Scalar's API client window (the try-it panel), once open. (The
// reference's server and authentication cards have the class scalar-client too.)
const clientWindow = `document.querySelector('.scalar-client[role="dialog"]')`

// sendButton is the visible Send button of the API client window.
const sendButton = `[...document.querySelectorAll('.scalar-client [data-addressbar-action="send"]')].find(__e2e.visible)`

// helpers is installed in every page before its scripts run (DevTools scripts are not
// subject to the page's CSP): it records CSP violations and finds operations.
const helpers = `
window.__e2e = {
  csp: [],
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  visible: (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden',
  // overlap says what is wrong with where el is drawn ('' when nothing): it must lie
  // within the box of within (a whole pixel of slack) and cross none of others, and
  // each of its clipping ancestors (overflow other than visible) must show all of it.
  overlap(el, within, others) {
    const r = el.getBoundingClientRect();
    const name = JSON.stringify(el.textContent.replace(/\s+/g, ' ').trim());
    const inside = (o) => r.left >= o.left - 1 && r.right <= o.right + 1 && r.top >= o.top - 1 && r.bottom <= o.bottom + 1;
    const w = within.getBoundingClientRect();
    if (!inside(w)) return name + ' sticks out of its container';
    for (let a = el.parentElement; a && a !== within.parentElement; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible' && !inside(a.getBoundingClientRect())) return name + ' is clipped';
    }
    for (const o of others) {
      const q = o.getBoundingClientRect();
      if (r.left < q.right - 1 && q.left < r.right - 1 && r.top < q.bottom - 1 && q.top < r.bottom - 1) return name + ' is under ' + JSON.stringify(o.innerText.trim() || o.getAttribute('aria-label') || o.className);
    }
    return '';
  },
  // section scrolls the operation whose Scalar id ends with suffix into view and
  // waits until Scalar has rendered it (it renders lazily).
  async section(suffix) {
    const find = () => [...document.querySelectorAll('[id*="/tag/"]')].find((e) => e.id.endsWith(suffix));
    for (let i = 0; i < 100; i++) {
      const el = find();
      if (el && el.tagName === 'SECTION' && !el.dataset.placeholder) return el;
      if (el) el.scrollIntoView({block: 'start'});
      await __e2e.sleep(100);
    }
    throw new Error('no rendered section ends with ' + suffix);
  },
};
document.addEventListener('securitypolicyviolation', (e) => window.__e2e.csp.push({
  directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber, column: e.columnNumber,
}));
`

// browser is one headless Chromium tab, seen from one test (in gives it to a subtest).
type browser struct {
	t   *testing.T
	ctx context.Context
	*tab
}

// tab is what the tab saw.
type tab struct {
	mu         sync.Mutex
	requests   map[network.RequestID]*sentRequest
	order      []network.RequestID
	exceptions []string
	marks      int
}

// in returns the browser for the (sub)test t, which must fail through its own t.
func (b *browser) in(t *testing.T) *browser { return &browser{t: t, ctx: b.ctx, tab: b.tab} }

type sentRequest struct {
	Method, URL string
	Headers     map[string]string
	Status      int64
}

// header returns a request header, whatever the case of its name.
func (r sentRequest) header(name string) string {
	for k, v := range r.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// newBrowser starts headless Chromium for the test, which may run it for 3 minutes.
func newBrowser(t *testing.T, chromium string) *browser {
	return newBrowserFor(t, chromium, 3*time.Minute)
}

// newBrowserFor starts headless Chromium for the test, which may run it for d.
func newBrowserFor(t *testing.T, chromium string, d time.Duration) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium)}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", chromium, err)
	}
	return watch(t, ctx)
}

// newTab opens a tab of its own for the test t in b's browser, closed when t ends: its
// storage for the page's session, its requests and its exceptions are its own (the
// origin's localStorage and cookies are the browser's).
func (b *browser) newTab(t *testing.T) *browser {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(b.ctx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab() })
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatalf("open a tab: %v", err)
	}
	return watch(t, ctx)
}

// watch records what the tab of ctx sends and throws, and gives each page it loads the
// test's helpers.
func watch(t *testing.T, ctx context.Context) *browser {
	t.Helper()
	b := &browser{t: t, ctx: ctx, tab: &tab{requests: map[network.RequestID]*sentRequest{}}}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			h := map[string]string{}
			for k, v := range e.Request.Headers {
				h[k] = fmt.Sprint(v)
			}
			if _, ok := b.requests[e.RequestID]; !ok {
				b.order = append(b.order, e.RequestID)
			}
			b.requests[e.RequestID] = &sentRequest{Method: e.Request.Method, URL: e.Request.URL, Headers: h}
		case *network.EventResponseReceived:
			if r, ok := b.requests[e.RequestID]; ok {
				r.Status = e.Response.Status
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text += " " + d.Exception.Description
			}
			b.exceptions = append(b.exceptions, text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: helpers}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// evalAs evaluates a JavaScript expression (awaiting a promise) in the page.
func evalAs[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// wait polls a JavaScript condition until it holds.
func (b *browser) wait(cond, what string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		b.screenshot("failure.png")
		b.t.Fatalf("waiting for %s (%s): %v; see %s/failure.png", what, cond, err, outputDir)
	}
}

// holds polls a JavaScript condition for up to d and reports whether it held.
func (b *browser) holds(cond string, d time.Duration) bool {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(100*time.Millisecond)))
	return err == nil
}

// mark evaluates an expression that yields an element, tags the element and returns a
// CSS selector of it, for real mouse clicks with chromedp.
func (b *browser) mark(js, name string) string {
	b.t.Helper()
	b.mu.Lock()
	b.marks++
	tag := fmt.Sprintf("%s-%d", name, b.marks)
	b.mu.Unlock()
	ok := evalAs[bool](b, fmt.Sprintf(`Promise.resolve(%s).then(el => { if (!el) return false; el.setAttribute('data-e2e', %q); el.scrollIntoView({block: 'center'}); return true; })`, js, tag))
	if !ok {
		b.screenshot("failure.png")
		b.t.Fatalf("no element for %s: %s", name, js)
	}
	return fmt.Sprintf(`[data-e2e=%q]`, tag)
}

// sectionText waits for an operation's section and returns its visible text.
func (b *browser) sectionText(suffix string) string {
	b.t.Helper()
	return evalAs[string](b, fmt.Sprintf(`__e2e.section(%q).then(s => s.innerText)`, suffix))
}

// scrollTo brings an operation to the top of the window; twice, because sections
// above it render (and grow) as the page scrolls past them.
func (b *browser) scrollTo(suffix string) {
	b.t.Helper()
	for range 2 {
		evalAs[bool](b, fmt.Sprintf(`__e2e.section(%q).then(s => (s.scrollIntoView({block: 'start'}), true))`, suffix))
		b.settle()
	}
}

// settle lets animations end before a screenshot.
func (b *browser) settle() { time.Sleep(700 * time.Millisecond) }

func (b *browser) scrollToTop() {
	b.t.Helper()
	evalAs[bool](b, `window.scrollTo(0, 0), true`)
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(outputDir, name), png, 0o644); err != nil {
		b.t.Error(err)
	}
}

func (b *browser) allRequests() []sentRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]sentRequest, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, *b.requests[id])
	}
	return out
}

func (b *browser) exceptionTexts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.exceptions)
}

// request returns the last request the page sent with method to path (any query).
func (b *browser) request(method, path string) (sentRequest, bool) {
	re := regexp.MustCompile(`^https?://[^/]+` + regexp.QuoteMeta(path) + `(\?|$)`)
	reqs := b.allRequests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method && re.MatchString(reqs[i].URL) {
			return reqs[i], true
		}
	}
	return sentRequest{}, false
}

// waitRequest waits until the page has sent method path and had an answer.
func (b *browser) waitRequest(method, path string) sentRequest {
	b.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r, ok := b.request(method, path); ok && r.Status != 0 {
			return r
		}
	}
	b.screenshot("failure.png")
	b.t.Fatalf("the page sent no %s %s (or had no answer)", method, path)
	return sentRequest{}
}

// sendKeys types text into the first visible element sel finds, as chromedp.SendKeys
// does (focus, then a key event per character) without SendKeys' read of the node's
// attributes, which chromedp v0.23.0 makes outside the node's lock (query.go), racing
// with the DOM events that change them: the race detector caught it in CI.
func sendKeys[S chromedp.Selectable](sel S, text string, opts ...chromedp.QueryOption) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(sel, append(opts, chromedp.NodeVisible)...), chromedp.KeyEvent(text))
}
