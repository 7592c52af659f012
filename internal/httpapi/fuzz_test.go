package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The fuzz targets of the HTTP layer. `go test` runs their seeds as tests;
// `scripts/fuzz` runs each under the fuzzer (docs/DEVELOPMENT.md, Fuzzing).

// fuzzAPI is a server for fuzzing: no limits on passwords, which would refuse every
// sign-up and login after the first few and hide the paths behind them.
func fuzzAPI(f *testing.F) *testAPI {
	return newTestAPI(f, func(c *httpapi.Config) {
		c.CredentialLimit = -1
		c.FailedLoginLimit = -1
	})
}

// bodyOp is an operation that takes a body, with what the fuzzer sends it.
type bodyOp struct {
	method, path, key, contentType string
	seeds                          []string
}

// FuzzRequestBodies sends any bytes as the body of every operation that takes one,
// through the whole handler stack. Whatever comes in, the answer is one the document
// describes, never a 5xx, and valid UTF-8 JSON; and a refused request changes nothing.
func FuzzRequestBodies(f *testing.F) {
	a := fuzzAPI(f)
	c := a.category(f, "Dogs")
	p := a.pet(f, "Rex", 50)
	o := a.order(f, a.Customer, p.ID, 1)
	pet := fmt.Sprintf(`{"name":"Rex","categoryId":%d,"status":"available","tags":["a"],"photoUrls":["https://example.com/a.jpg"]}`, c.ID)
	ops := []bodyOp{
		{"POST", "/v1/accounts", "", "application/json", []string{
			`{"email":"ada@example.com","password":"correct horse battery"}`,
			`{"email":"\u212aate@example.com","password":"correct horse battery"}`,
			`{"email":"a@example.com","password":"correct horse battery","email":"b@example.com"}`,
			`{"email":"a\u0000@example.com","password":"correct horse battery"}`,
		}},
		{"POST", "/v1/api-keys", a.Customer, "application/json", []string{`{"name":"laptop"}`, `{"name":"l` + "\xff" + `"}`, `{"name":"\u200b"}`,
			`{"name":"far","expiresAt":"9999-12-31T23:59:59-23:59"}`, `{"name":"far","expiresAt":"9999-12-31T23:59:59+23:59"}`,
			`{"name":"far","expiresAt":"0000-01-01T00:00:00+23:59"}`, `{"name":"\ud800"}`}},
		{"POST", "/v1/messages", a.Customer, "application/json", []string{`{"message":"hello"}`, `{"message":"hi\u0000"}`}},
		{"POST", "/v1/pets", a.Admin, "application/json", []string{pet, `{"name":"Rex\u202egnp.exe","categoryId":1}`, `{"name":"x","categoryId":9223372036854775807}`}},
		{"PUT", path("/v1/pets/%d", p.ID), a.Admin, "application/json", []string{pet, `{"name":"Rex","categoryId":1,"status":"sold"}`}},
		{"PATCH", path("/v1/pets/%d", p.ID), a.Admin, "application/json", []string{`{"name":"Max"}`, `{"status":"pending"}`, `{"name": 12}`, `{"name":"a","name":"b"}`}},
		{"PATCH", path("/v1/pets/%d", p.ID), a.Admin, "application/merge-patch+json", []string{`{"tags":null}`, `{"category":null}`}},
		{"POST", "/v1/categories", a.Admin, "application/json", []string{`{"name":"Cats","description":"purr"}`, `{"name":"` + strings.Repeat("x", 101) + `"}`}},
		{"PUT", path("/v1/categories/%d", c.ID), a.Admin, "application/json", []string{`{"name":"Dogs","description":"woof"}`}},
		{"PUT", path("/v1/store/inventory/%d", p.ID), a.Admin, "application/json", []string{`{"quantity":50}`, `{"quantity":-1}`, `{"quantity":1e400}`}},
		{"POST", "/v1/store/orders", a.Customer, "application/json", []string{
			fmt.Sprintf(`{"petId":%d,"quantity":1}`, p.ID),
			fmt.Sprintf(`{"petId":%d,"quantity":1,"shipDate":"9999-12-31T23:59:59-23:59"}`, p.ID),
			fmt.Sprintf(`{"petId":%d,"quantity":1,"shipDate":"0001-01-01T00:00:00+23:59"}`, p.ID),
			fmt.Sprintf(`{"petId":%d,"quantity":1,"quantity":100}`, p.ID),
			`{"petId":1,"quantity":1}` + strings.Repeat("[", 5000),
		}},
		{"PATCH", path("/v1/store/orders/%d", o.ID), a.Admin, "application/json", []string{`{"complete":false}`, `{"shipDate":"2030-01-01T00:00:00Z"}`, `{"shipDate":"2030-01-01T00:00:00.999999999Z"}`}},
	}
	for i, op := range ops {
		for _, s := range op.seeds {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		op := ops[int(which)%len(ops)]
		before := a.state(t)
		res := a.do(t, req{Method: op.method, Path: op.path, Key: op.key, Body: string(body), Header: map[string]string{"Content-Type": op.contentType}})
		checkAnswer(t, res)
		if res.Status >= 400 {
			if after := a.state(t); !bytes.Equal(before, after) {
				t.Fatalf("%s %s answered %d and changed the state:\nbefore %s\nafter  %s", op.method, op.path, res.Status, before, after)
			}
		}
	})
}

// instantField is a date-time of a request body that FuzzRequestInstants sends.
type instantField struct {
	op, field, method, path, key, body string
}

// FuzzRequestInstants sends any date-time, made from its parts so that the fuzzer
// reaches the edges that random bytes seldom spell (years 0000 and 9999, offsets up
// to ±23:59, the last second of a day), as every date-time field of every request
// body: the answer is never a 5xx, and a refused request changes nothing. A key's
// expiresAt of 9999-12-31T23:59:59-23:59 answered 500 on both stores. The fields are
// those of the document: a date-time field added to it and not here fails the seeds.
func FuzzRequestInstants(f *testing.F) {
	a := fuzzAPI(f)
	p := a.pet(f, "Rex", 1000)
	o := a.order(f, a.Customer, p.ID, 1)
	fields := []instantField{
		{"createApiKey", "expiresAt", "POST", "/v1/api-keys", a.Customer, `{"name":"k","expiresAt":%q}`},
		{"placeOrder", "shipDate", "POST", "/v1/store/orders", a.Customer, fmt.Sprintf(`{"petId":%d,"quantity":1,"shipDate":%%q}`, p.ID)},
		{"updateOrder", "shipDate", "PATCH", path("/v1/store/orders/%d", o.ID), a.Admin, `{"shipDate":%q}`},
	}
	var inDocument, here []string
	for _, tf := range a.requestStrings(f) {
		if tf.Kind == kindDateTime {
			inDocument = append(inDocument, tf.String())
		}
	}
	for _, fl := range fields {
		here = append(here, fl.op+"/"+fl.field)
	}
	if !slices.Equal(inDocument, here) {
		f.Fatalf("the document's date-times are %v; FuzzRequestInstants sends %v", inDocument, here)
	}
	for i := range fields {
		which := uint8(i)
		f.Add(which, uint16(9999), uint8(12), uint8(31), uint8(23), uint8(59), uint8(59), int16(-(23*60 + 59)))
		f.Add(which, uint16(9999), uint8(12), uint8(31), uint8(23), uint8(59), uint8(59), int16(23*60+59))
		f.Add(which, uint16(0), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), int16(23*60+59))
		f.Add(which, uint16(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), int16(1))
		f.Add(which, uint16(2099), uint8(12), uint8(31), uint8(23), uint8(59), uint8(59), int16(0))
		f.Add(which, uint16(2100), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), int16(1))
	}
	f.Fuzz(func(t *testing.T, which uint8, year uint16, month, day, hour, minute, second uint8, offset int16) {
		fl := fields[int(which)%len(fields)]
		body := fmt.Sprintf(fl.body, dateTime(year, month, day, hour, minute, second, offset))
		before := a.state(t)
		res := a.do(t, req{Method: fl.method, Path: fl.path, Key: fl.key, Body: body})
		checkAnswer(t, res)
		if res.Status >= 400 {
			if after := a.state(t); !bytes.Equal(before, after) {
				t.Fatalf("%s answered %d and changed the state:\nbefore %s\nafter  %s", body, res.Status, before, after)
			}
		}
	})
}

// dateTime spells an RFC 3339 date-time from its parts, each brought into the range
// its field can spell (a month of 0 or 13 and a second of 60 stay: the decoder's to
// refuse), with offset minutes of up to ±23:59.
func dateTime(year uint16, month, day, hour, minute, second uint8, offset int16) string {
	zone := "Z"
	if off := int(offset) % (24 * 60); off != 0 {
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		zone = fmt.Sprintf("%s%02d:%02d", sign, off/60, off%60)
	}
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d%s", year%10000, month%14, day%32, hour%24, minute%60, second%61, zone)
}

// FuzzAuthorization sends any Authorization header to an operation for keys and to
// one for passwords. Only a real key or the real password gets in; nothing answers 5xx.
func FuzzAuthorization(f *testing.F) {
	a := fuzzAPI(f)
	a.do(f, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"kate@example.com","password":"correct horse battery"}`}).expect(201, "")
	good := map[string]bool{
		"Bearer " + a.Customer:                             true,
		"Bearer " + a.Admin:                                true,
		basic("kate@example.com", "correct horse battery"): true,
	}
	for _, s := range []string{
		"Bearer " + a.Customer, "bearer " + a.Customer, "Bearer  " + a.Customer, "Bearer " + a.Customer + "x",
		"Bearer", "Bearer ", "Basic", "Basic !!!", "Basic " + base64.StdEncoding.EncodeToString([]byte("no-colon")),
		basic("kate@example.com", "correct horse battery"), basic("KATE@example.com", "correct horse battery"),
		basic("\u212aate@example.com", "correct horse battery"), basic("kate@example.com\x00", "x"),
		"Digest username=x", "\xff\xfe", "Bearer psk_" + strings.Repeat("a", 32),
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, authz string, login bool) {
		r := req{Method: "GET", Path: "/v1/categories", Auth: authz}
		if login {
			r = req{Method: "POST", Path: "/v1/api-keys", Auth: authz, Body: `{"name":"k"}`}
		}
		if strings.ContainsAny(authz, "\r\n\x00") || !validHeaderValue(authz) {
			return // net/http refuses to send it; the server never sees it
		}
		res := a.do(t, r)
		checkAnswer(t, res)
		if res.Status < 300 && !sameCredentials(authz, good) {
			t.Fatalf("Authorization %q got in: %d %s", authz, res.Status, res.Body)
		}
	})
}

// sameCredentials reports whether authz is one of the good headers, as the server may
// read it: a Basic email in any letter case or Unicode form.
func sameCredentials(authz string, good map[string]bool) bool {
	authz = strings.Trim(authz, " \t") // as net/http reads a header value
	// The scheme is case-insensitive (RFC 9110, 11.1).
	scheme, raw, _ := strings.Cut(authz, " ")
	if strings.EqualFold(scheme, "Bearer") && good["Bearer "+raw] {
		return true
	}
	if !strings.EqualFold(scheme, "Basic") {
		return false
	}
	creds, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return false
	}
	email, password, _ := strings.Cut(string(creds), ":")
	email, err = petstore.CleanEmail(email)
	return err == nil && password == "correct horse battery" && petstore.EmailKey(email) == "kate@example.com"
}

// checkAnswer holds for every answer: not a server error, and a body that is valid
// UTF-8 JSON when there is one.
func checkAnswer(t *testing.T, res *response) {
	t.Helper()
	if res.Status >= 500 {
		t.Fatalf("answered %d: %s", res.Status, res.Body)
	}
	if len(res.Body) > 0 && (!utf8.Valid(res.Body) || !json.Valid(res.Body)) {
		t.Fatalf("answered a body that is not valid UTF-8 JSON: %q", res.Body)
	}
}

// state is what a refused request must leave as it was: every list an admin and the
// customer can read.
func (a *testAPI) state(t testing.TB) []byte {
	var b bytes.Buffer
	for _, r := range []req{
		{Method: "GET", Path: "/v1/pets?limit=100", Key: a.Admin},
		{Method: "GET", Path: "/v1/categories?limit=100", Key: a.Admin},
		{Method: "GET", Path: "/v1/store/inventory?limit=100", Key: a.Admin},
		{Method: "GET", Path: "/v1/store/orders?limit=100", Key: a.Admin},
		{Method: "GET", Path: "/v1/api-keys?limit=100", Key: a.Customer},
		{Method: "GET", Path: "/v1/webhooks?limit=100", Key: a.Admin},
	} {
		b.Write(a.do(t, r).expect(200, "").Body)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// validHeaderValue reports whether net/http's client would send v as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
