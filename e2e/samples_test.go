package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/mail/mailtest"
	"github.com/acme-pets/petstore/internal/media/phototest"
)

// The placeholders of the samples, as printed in the document.
const (
	sampleBase     = "http://localhost:8080/v1"
	sampleKey      = "YOUR_API_KEY"
	sampleEmail    = "YOUR_EMAIL"
	samplePassword = "YOUR_PASSWORD"
	sampleToken    = "YOUR_TOKEN"
	sampleID       = "1"          // every numeric path id
	sampleMessage  = "MESSAGE_ID" // the path id of getMessage
	sampleEvent    = "EVENT_ID"   // the path id of getEvent
	// sampleSize is the photo size in getPhoto's path, and samplePhotoFile the image
	// the upload samples send.
	sampleSize      = "thumb"
	samplePhotoFile = "rex.jpg"
)

// samplePhotos are the photo ids the samples print; the first is the one in paths.
var samplePhotos = []string{"ph_2ocjcdj23o2hkliy2weuirxv2a", "ph_2ocjcdeuzxjv5uwnhsx2wqqvyd"}

// TestCodeSamples runs every x-codeSamples entry of the served document, as a reader
// would after filling in the base URL, a real key and real ids: cURL samples with
// curl, JavaScript with node (global fetch), Python with python3 and requests. Each
// runs against the live server through a recording proxy, and must exit 0 after one
// request to its own operation that got the operation's documented success status.
//
// -short skips it, as the race run does (.ci/run): what it tests is the samples, 118
// programs in other languages the race detector does not look into, and under it they
// took two minutes; the server's side of every operation is race-checked by the HTTP
// suite's tests that walk every operation of the document.
func TestCodeSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 123 samples with curl, node and python3")
	}
	// A real SMTP server: a password reset needs one, and its sample needs the token
	// of a mailed link.
	box := mailtest.Start(t, mailtest.Options{})
	srv := startServer(t, "--smtp-url", box.URL("smtp", "", ""))
	ops := documentOperations(t, srv.document(t))
	if len(ops) == 0 {
		t.Fatal("the served document has no operations")
	}
	fx := &fixtures{srv: srv, mail: box}
	for _, op := range ops {
		langs := make([]string, 0, len(op.Samples))
		for _, s := range op.Samples {
			langs = append(langs, s.Lang+"="+s.Label)
		}
		if want := []string{"curl=cURL", "javascript=JavaScript", "python=Python"}; !slices.Equal(langs, want) {
			t.Errorf("%s: x-codeSamples are %v, want exactly %v in that order", op.ID, langs, want)
		}
		prepare, ok := samplePreparation[op.ID]
		if !ok {
			t.Errorf("%s: no fixture rule: add the operation to samplePreparation in samples_test.go", op.ID)
			continue
		}
		for _, smp := range op.Samples {
			t.Run(op.ID+"/"+smp.Lang, func(t *testing.T) {
				t.Parallel()
				run := runnerFor(t, smp.Lang)
				f := prepare(t, fx)
				rec := newRecorder(t, srv.URL)
				src := fillSample(t, op, smp.Source, f, rec.URL+"/v1")

				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				dir := t.TempDir()
				for name, data := range f.Files {
					if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				out, err := run(ctx, dir, src)
				if err != nil {
					t.Fatalf("the %s sample of %s failed: %v\noutput:\n%s\nsample as run:\n%s", smp.Label, op.ID, err, out, src)
				}
				seen := rec.requests()
				if len(seen) != 1 {
					t.Fatalf("the %s sample of %s sent %d requests, want 1: %v\nsample as run:\n%s", smp.Label, op.ID, len(seen), seen, src)
				}
				got := seen[0]
				if got.Method != op.Method || !op.matches(got.Path) {
					t.Errorf("the %s sample of %s sent %s %s, want %s /v1%s", smp.Label, op.ID, got.Method, got.Path, op.Method, op.Path)
				}
				if got.Status != op.Success {
					t.Errorf("the %s sample of %s got %d, want the documented %d\noutput:\n%s", smp.Label, op.ID, got.Status, op.Success, out)
				}
			})
		}
	}
}

// operation is what the samples test reads of one operation of the served document.
type operation struct {
	ID, Method, Path string
	Success          int // the one 2xx response the document gives
	Samples          []codeSample
}

type codeSample struct{ Lang, Label, Source string }

// matches reports whether a request path (with the /v1 base) is one of this
// operation's paths.
func (op operation) matches(path string) bool {
	pattern := "^/v1" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(op.Path), `[^/]+`) + "$"
	return regexp.MustCompile(pattern).MatchString(path)
}

// documentOperations lists the operations of a decoded document, by path then method.
func documentOperations(t *testing.T, doc map[string]any) []operation {
	t.Helper()
	paths, _ := doc["paths"].(map[string]any)
	var ops []operation
	for path, item := range paths {
		item, _ := item.(map[string]any)
		for method, v := range item {
			o, ok := v.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			op := operation{Method: strings.ToUpper(method), Path: path}
			op.ID, _ = o["operationId"].(string)
			responses, _ := o["responses"].(map[string]any)
			for code := range responses {
				// A 206 beside a 200 answers a Range, which the samples do not send.
				if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 && !(n == 206 && responses["200"] != nil) {
					if op.Success != 0 {
						t.Errorf("%s documents two success statuses, %d and %d", op.ID, op.Success, n)
					}
					op.Success = n
				}
			}
			if op.Success == 0 {
				t.Errorf("%s documents no success status", op.ID)
			}
			samples, _ := o["x-codeSamples"].([]any)
			for _, s := range samples {
				s, _ := s.(map[string]any)
				lang, _ := s["lang"].(string)
				label, _ := s["label"].(string)
				source, _ := s["source"].(string)
				op.Samples = append(op.Samples, codeSample{lang, label, source})
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops
}

// filled is what one sample needs to run: the values of its placeholders.
type filled struct {
	Key             string            // YOUR_API_KEY
	Email, Password string            // YOUR_EMAIL, YOUR_PASSWORD
	Token           string            // YOUR_TOKEN: a one-time link's token
	PathIDs         map[string]string // path parameter → value
	BodyIDs         map[string]int64  // "petId" / "categoryId" in a body → value
	Photos          []string          // the real ids of samplePhotos, in order
	Files           map[string][]byte // files the sample reads, in its folder
}

var (
	pathParam = regexp.MustCompile(`\{([^}]+)\}`)
	bodyID    = regexp.MustCompile(`("?)\b(petId|categoryId)("?\s*:\s*)1\b`)
)

// fillSample puts real values in place of a sample's placeholders and fails the
// test when the sample does not use the documented placeholders or leaves one.
func fillSample(t *testing.T, op operation, src string, f filled, base string) string {
	t.Helper()
	// The operation's URL as printed (ids as placeholders) becomes the real one.
	printed := pathParam.ReplaceAllStringFunc(op.Path, func(p string) string {
		switch p {
		case "{messageId}":
			return sampleMessage
		case "{eventId}":
			return sampleEvent
		case "{photoId}":
			return samplePhotos[0]
		case "{size}":
			return sampleSize
		}
		return sampleID
	})
	real := pathParam.ReplaceAllStringFunc(op.Path, func(p string) string {
		v, ok := f.PathIDs[strings.Trim(p, "{}")]
		if !ok {
			t.Fatalf("%s: no fixture value for the path parameter %s", op.ID, p)
		}
		return url.PathEscape(v)
	})
	urlRE := regexp.MustCompile(regexp.QuoteMeta(sampleBase+printed) + `\b`)
	if !urlRE.MatchString(src) {
		t.Fatalf("%s: the sample does not call %s:\n%s", op.ID, sampleBase+printed, src)
	}
	src = urlRE.ReplaceAllLiteralString(src, sampleBase+real)
	src = bodyID.ReplaceAllStringFunc(src, func(m string) string {
		parts := bodyID.FindStringSubmatch(m)
		v, ok := f.BodyIDs[parts[2]]
		if !ok {
			t.Fatalf("%s: the sample names %s 1, and the fixture has no %s", op.ID, parts[2], parts[2])
		}
		return parts[1] + parts[2] + parts[3] + strconv.FormatInt(v, 10)
	})
	for i, real := range f.Photos {
		src = strings.ReplaceAll(src, samplePhotos[i], real)
	}
	src = strings.NewReplacer(
		sampleBase, base,
		sampleKey, f.Key,
		sampleEmail, f.Email,
		samplePassword, f.Password,
		sampleToken, f.Token,
	).Replace(src)
	for _, left := range append([]string{"localhost:8080", "YOUR_", sampleMessage, sampleEvent}, samplePhotos...) {
		if strings.Contains(src, left) {
			t.Fatalf("%s: the sample still has %q after filling in:\n%s", op.ID, left, src)
		}
	}
	return src
}

// runner runs a sample's source in dir and returns its combined output.
type runner func(ctx context.Context, dir, src string) ([]byte, error)

var toolChecks sync.Map // lang → error (nil when the tool works)

// runnerFor returns how to run samples in lang, after checking once that the tool is
// there (needTool otherwise).
func runnerFor(t *testing.T, lang string) runner {
	t.Helper()
	type check struct {
		tool, probe string
		args        []string
	}
	checks := map[string]check{
		"curl":       {"curl", "is not installed", []string{"curl", "--version"}},
		"javascript": {"node", "is not installed or has no global fetch (Node.js 18 or later)", []string{"node", "-e", "if (typeof fetch !== 'function') process.exit(3)"}},
		"python":     {"python3", "is not installed or cannot import requests (Debian: python3-requests)", []string{"python3", "-c", "import requests"}},
	}
	c, ok := checks[lang]
	if !ok {
		t.Fatalf("no runner for samples in %q", lang)
	}
	v, _ := toolChecks.LoadOrStore(lang, sync.OnceValue(func() error {
		return exec.Command(c.args[0], c.args[1:]...).Run()
	}))
	if err := v.(func() error)(); err != nil {
		needTool(t, c.tool, c.probe+" ("+err.Error()+")")
	}
	file := map[string]string{"curl": "sample.sh", "javascript": "sample.js", "python": "sample.py"}[lang]
	command := map[string]string{"curl": "sh", "javascript": "node", "python": "python3"}[lang]
	return func(ctx context.Context, dir, src string) ([]byte, error) {
		name := filepath.Join(dir, file)
		if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, command, name)
		cmd.Dir = dir
		// Loopback calls must not go through a proxy the environment names.
		cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
		return cmd.CombinedOutput()
	}
}

// recorder is a reverse proxy in front of the server that remembers each request it
// passes and the status of the answer, so the test sees what a sample did.
type recorder struct {
	URL  string
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	Method, Path string
	Status       int
}

func (r seenRequest) String() string { return fmt.Sprintf("%s %s → %d", r.Method, r.Path, r.Status) }

func newRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(to) },
		ModifyResponse: func(res *http.Response) error {
			rec.add(seenRequest{res.Request.Method, res.Request.URL.Path, res.StatusCode})
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			rec.add(seenRequest{r.Method, r.URL.Path, http.StatusBadGateway})
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(ts.Close)
	rec.URL = ts.URL
	return rec
}

func (r *recorder) add(s seenRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
}

func (r *recorder) requests() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// fixtures makes what the samples need, through the API, with keys of the accounts
// the server was started with.
type fixtures struct {
	srv  *server
	mail *mailtest.Server // where the server's mail goes
	n    atomic.Int64
}

// signedUp opens an account with a password (POST /accounts) for one sample.
func (fx *fixtures) signedUp(t *testing.T) (email, password string) {
	t.Helper()
	email, password = strings.ReplaceAll(fx.unique("person"), " ", "-")+"@example.com", "sample password 123"
	fx.srv.call(t, "", "POST", "/accounts", map[string]any{"email": email, "password": password}, http.StatusCreated, nil)
	return email, password
}

// mailedToken waits (10 s at most) for the mail to email and returns the token of
// the link in it.
func (fx *fixtures) mailedToken(t *testing.T, email string) string {
	t.Helper()
	link := regexp.MustCompile(`\?token=(ps[ir]_[A-Za-z0-9_-]{43})`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range fx.mail.Messages(t) {
			if slices.Contains(m.To, email) {
				if found := link.FindStringSubmatch(m.Text); found != nil {
					return found[1]
				}
			}
		}
	}
	t.Fatalf("no mail with a link to %s arrived in 10s", email)
	return ""
}

func (fx *fixtures) unique(prefix string) string {
	return fmt.Sprintf("%s %d", prefix, fx.n.Add(1))
}

// key makes a new account of the role, with a key, for one sample (with the
// operator's command, as an operator would), so that no two samples share an
// account's rate limit or its cap on keys.
func (fx *fixtures) key(t *testing.T, role string) string {
	t.Helper()
	return fx.srv.createKey(t, strings.ReplaceAll(fx.unique(role), " ", "-")+"@example.com", role)
}

func (fx *fixtures) category(t *testing.T, admin string) int64 {
	t.Helper()
	var c struct{ ID int64 }
	fx.srv.call(t, admin, "POST", "/categories", map[string]any{"name": fx.unique("Fixture category")}, http.StatusCreated, &c)
	return c.ID
}

// pet makes an available pet, in a new category, with stock.
func (fx *fixtures) pet(t *testing.T, admin string, stock int) (petID, categoryID int64) {
	t.Helper()
	categoryID = fx.category(t, admin)
	var p struct{ ID int64 }
	fx.srv.call(t, admin, "POST", "/pets", map[string]any{"name": fx.unique("Fixture pet"), "categoryId": categoryID, "price": 1999}, http.StatusCreated, &p)
	if stock > 0 {
		fx.srv.call(t, admin, "PUT", fmt.Sprintf("/store/inventory/%d", p.ID), map[string]any{"quantity": stock}, http.StatusOK, nil)
	}
	return p.ID, categoryID
}

// order places an incomplete order with key for a new pet.
func (fx *fixtures) order(t *testing.T, key string) int64 {
	t.Helper()
	admin := fx.key(t, "admin")
	petID, _ := fx.pet(t, admin, 5)
	var o struct{ ID int64 }
	fx.srv.call(t, key, "POST", "/store/orders", map[string]any{"petId": petID, "quantity": 1}, http.StatusCreated, &o)
	return o.ID
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

// samplePreparation says, per operation, with which account its samples run and what
// must exist first: real ids chosen so that the documented success status is the
// right answer (a pet without orders to delete, an unused category, an open order of
// the caller to cancel, one of the caller's keys to revoke…). An operation missing
// here fails the test, so a new operation cannot go untested.
var samplePreparation = map[string]func(t *testing.T, fx *fixtures) filled{
	// Platform
	"createAccount":     func(t *testing.T, fx *fixtures) filled { return filled{} },
	"getCurrentAccount": customer,
	"listAccounts":      admin,
	// A sign-up of its own, which the samples disable, enable or leave a customer:
	// never the last admin (and, a sign-up, never made admin).
	"updateAccount": func(t *testing.T, fx *fixtures) filled {
		var a struct{ ID int64 }
		email := strings.ReplaceAll(fx.unique("staff"), " ", "-") + "@example.com"
		fx.srv.call(t, "", "POST", "/accounts", map[string]any{"email": email, "password": "sample password 123"}, http.StatusCreated, &a)
		return filled{Key: fx.key(t, "admin"), PathIDs: map[string]string{"accountId": id(a.ID)}}
	},
	"createApiKey": func(t *testing.T, fx *fixtures) filled {
		email, password := strings.ReplaceAll(fx.unique("reader"), " ", "-")+"@example.com", "sample password 123"
		fx.srv.call(t, "", "POST", "/accounts", map[string]any{"email": email, "password": password}, http.StatusCreated, nil)
		return filled{Email: email, Password: password}
	},
	"listApiKeys": customer,
	"createSession": func(t *testing.T, fx *fixtures) filled {
		email, password := fx.signedUp(t)
		return filled{Email: email, Password: password}
	},
	"createInvitation": admin,
	"acceptInvitation": func(t *testing.T, fx *fixtures) filled {
		var inv struct{ URL string }
		email := strings.ReplaceAll(fx.unique("invitee"), " ", "-") + "@example.com"
		fx.srv.call(t, fx.key(t, "admin"), "POST", "/invitations", map[string]any{"email": email}, http.StatusCreated, &inv)
		u, err := url.Parse(inv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return filled{Token: u.Query().Get("token")}
	},
	"requestPasswordReset": func(t *testing.T, fx *fixtures) filled {
		email, _ := fx.signedUp(t)
		return filled{Email: email}
	},
	"resetPassword": func(t *testing.T, fx *fixtures) filled {
		email, _ := fx.signedUp(t)
		fx.srv.call(t, "", "POST", "/password-resets", map[string]any{"email": email}, http.StatusAccepted, nil)
		return filled{Token: fx.mailedToken(t, email)}
	},
	"revokeApiKey": func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, "customer")
		var other struct{ ID int64 }
		fx.srv.call(t, key, "POST", "/api-keys", map[string]any{"name": "to revoke"}, http.StatusCreated, &other)
		return filled{Key: key, PathIDs: map[string]string{"keyId": id(other.ID)}}
	},
	"sendMessage": customer,
	"getMessage": func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, "customer")
		var m struct{ ID string }
		fx.srv.call(t, key, "POST", "/messages", map[string]any{"message": "For the sample."}, http.StatusCreated, &m)
		return filled{Key: key, PathIDs: map[string]string{"messageId": m.ID}}
	},
	// Pets and categories
	"listPets": customer,
	"createPet": func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, "admin")
		return filled{Key: key, BodyIDs: map[string]int64{"categoryId": fx.category(t, key)}}
	},
	"getPetById": petAs("customer", 0),
	"replacePet": petAs("admin", 0),
	"updatePet":  petAs("admin", 0),
	"deletePet":  petAs("admin", 0),
	"uploadPetPhoto": func(t *testing.T, fx *fixtures) filled {
		f := petAs("admin", 0)(t, fx)
		f.Files = map[string][]byte{samplePhotoFile: phototest.JPEG(t, 640, 480)}
		return f
	},
	"reorderPetPhotos": photosAs(2),
	"deletePetPhoto":   photosAs(1),
	"getPhoto":         photosAs(1),
	"listCategories":   customer,
	"createCategory":   admin,
	"getCategory":      categoryAs("customer"),
	"replaceCategory":  categoryAs("admin"),
	"deleteCategory":   categoryAs("admin"),
	// Store
	"listInventory":  customer,
	"getInventory":   petAs("customer", 3),
	"setInventory":   petAs("admin", 3),
	"listOrders":     customer,
	"getSalesReport": admin,
	"placeOrder": func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, "customer")
		admin := fx.key(t, "admin")
		petID, _ := fx.pet(t, admin, 5)
		return filled{Key: key, BodyIDs: map[string]int64{"petId": petID}}
	},
	"getOrder":    orderAs("customer"),
	"cancelOrder": orderAs("customer"),
	"updateOrder": orderAs("admin"),
	// Webhooks and events
	"listWebhooks":        admin,
	"createWebhook":       admin,
	"getWebhook":          webhookAs,
	"updateWebhook":       webhookAs,
	"deleteWebhook":       webhookAs,
	"rotateWebhookSecret": webhookAs,
	"sendTestEvent":       webhookAs,
	"listDeliveries":      webhookAs,
	"retryDelivery": func(t *testing.T, fx *fixtures) filled {
		f := webhookAs(t, fx)
		var d struct{ ID int64 }
		fx.srv.call(t, f.Key, "POST", "/webhooks/"+f.PathIDs["webhookId"]+"/test", nil, http.StatusAccepted, &d)
		f.PathIDs["deliveryId"] = id(d.ID)
		return f
	},
	"listEvents": admin,
	"getEvent": func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, "admin")
		fx.pet(t, key, 2) // its stock makes events
		var events []struct{ ID string }
		fx.srv.call(t, key, "GET", "/events?limit=1", nil, http.StatusOK, &events)
		if len(events) == 0 {
			t.Fatal("the feed is empty after a pet was given stock")
		}
		return filled{Key: key, PathIDs: map[string]string{"eventId": events[0].ID}}
	},
	"streamEvents": streamAs,
}

// streamAs: an admin, and orders placed now and then until the sample is done, so
// that the stream it opens has an order.placed to show (and stop at).
func streamAs(t *testing.T, fx *fixtures) filled {
	key := fx.key(t, "admin")
	buyer := fx.key(t, "customer")
	petID, _ := fx.pet(t, key, 1000)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			body := strings.NewReader(fmt.Sprintf(`{"petId":%d,"quantity":1}`, petID))
			req, err := http.NewRequestWithContext(ctx, "POST", fx.srv.URL+"/v1/store/orders", body)
			if err != nil {
				return
			}
			req.Header.Set("Authorization", "Bearer "+buyer)
			req.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}
	}()
	return filled{Key: key}
}

// webhookAs: a new endpoint (on a name nobody resolves here); the sample runs as an
// admin.
func webhookAs(t *testing.T, fx *fixtures) filled {
	key := fx.key(t, "admin")
	var w struct{ ID int64 }
	fx.srv.call(t, key, "POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/samples", "events": []string{"*"}}, http.StatusCreated, &w)
	return filled{Key: key, PathIDs: map[string]string{"webhookId": id(w.ID)}}
}

func customer(t *testing.T, fx *fixtures) filled {
	key := fx.key(t, "customer")
	return filled{Key: key}
}

func admin(t *testing.T, fx *fixtures) filled {
	key := fx.key(t, "admin")
	return filled{Key: key}
}

// petAs: a new pet (with stock) in a new category; the sample runs as role.
func petAs(role string, stock int) func(*testing.T, *fixtures) filled {
	return func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, role)
		admin := fx.key(t, "admin")
		petID, categoryID := fx.pet(t, admin, stock)
		return filled{Key: key, PathIDs: map[string]string{"petId": id(petID)}, BodyIDs: map[string]int64{"categoryId": categoryID}}
	}
}

// photosAs: a pet with n photos; the samples run as an admin (getPhoto's needs no key).
func photosAs(n int) func(*testing.T, *fixtures) filled {
	return func(t *testing.T, fx *fixtures) filled {
		f := petAs("admin", 0)(t, fx)
		for i := range n {
			f.Photos = append(f.Photos, fx.srv.uploadPhoto(t, f.Key, f.PathIDs["petId"], phototest.PNG(t, 60+i, 40)))
		}
		f.PathIDs["photoId"], f.PathIDs["size"] = f.Photos[0], sampleSize
		return f
	}
}

// categoryAs: a new category that no pet uses; the sample runs as role.
func categoryAs(role string) func(*testing.T, *fixtures) filled {
	return func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, role)
		admin := fx.key(t, "admin")
		return filled{Key: key, PathIDs: map[string]string{"categoryId": id(fx.category(t, admin))}}
	}
}

// orderAs: an incomplete order that the customer placed; the sample runs as role (the
// customer's own order, or any order for an admin).
func orderAs(role string) func(*testing.T, *fixtures) filled {
	return func(t *testing.T, fx *fixtures) filled {
		key := fx.key(t, role)
		placer := key
		if role != "customer" {
			placer = fx.key(t, "customer")
		}
		return filled{Key: key, PathIDs: map[string]string{"orderId": id(fx.order(t, placer))}}
	}
}
