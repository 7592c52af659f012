package main

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// readmeRow matches a row of a table of flags in the docs:
// | `--flag` | `PETSTORE_FLAG` | default | meaning |
var readmeRow = regexp.MustCompile("(?m)^\\| `--([a-z-]+)[^`]*` \\| `([A-Z_]+)`[^|]* \\| ([^|]+) \\|")

func TestTheREADMEConfigurationTableIsTheFlagsAndTheirDefaults(t *testing.T) {
	checkFlagTable(t, "README.md", "## Configuration", "serve", serveFlags(new(serveConfig)))
}

func TestTheOperatingTableOfKeysCreateIsItsFlagsAndTheirDefaults(t *testing.T) {
	checkFlagTable(t, "docs/OPERATING.md", "### API keys from the command line", "keys create", keyFlags(new(keyOptions)))
}

// checkFlagTable compares the flag table in the section under heading (up to the
// next heading) of doc, a file of the repository, with the flags of cmd.
func checkFlagTable(t *testing.T, doc, heading, cmd string, fs *flag.FlagSet) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", doc, heading)
	}
	if end := regexp.MustCompile(`(?m)^##+ `).FindStringIndex(section); end != nil {
		section = section[:end[0]]
	}
	type row struct{ variable, def string }
	rows := map[string]row{}
	for _, m := range readmeRow.FindAllStringSubmatch(section, -1) {
		def := strings.TrimSpace(m[3])
		rows[m[1]] = row{m[2], strings.Trim(def, "`")}
	}
	if len(rows) == 0 {
		t.Fatalf("found no table of flags under %q in %s", heading, doc)
	}
	fs.VisitAll(func(f *flag.Flag) {
		r, ok := rows[f.Name]
		if !ok {
			t.Errorf("--%s is not in %s's table of %s", f.Name, doc, cmd)
			return
		}
		delete(rows, f.Name)
		if want := "PETSTORE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")); r.variable != want {
			t.Errorf("--%s: %s names %s, want %s", f.Name, doc, r.variable, want)
		}
		if !sameDefault(f, r.def) {
			t.Errorf("--%s: %s says the default is %q, the flag has %q", f.Name, doc, r.def, f.DefValue)
		}
	})
	for name := range rows {
		t.Errorf("%s lists --%s, which %s does not have", doc, name, cmd)
	}
}

// sameDefault reports whether a default as the docs write it is the flag's.
func sameDefault(f *flag.Flag, readme string) bool {
	switch f.DefValue {
	case "", "false":
		return readme == "none" || readme == "off" || readme == "from the document"
	}
	if want, err := time.ParseDuration(f.DefValue); err == nil {
		got, err := time.ParseDuration(readme)
		return err == nil && got == want
	}
	return readme == f.DefValue
}

func TestServeRunsWithTheHTTPLayersDefaults(t *testing.T) {
	c, err := parseServeConfig(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := c.api(deps{}, "http://127.0.0.1:1").WithDefaults()
	if got.KeyCacheTTL != auth.DefaultKeyCacheTTL {
		t.Errorf("the key cache of serve lives %v, want %v", got.KeyCacheTTL, auth.DefaultKeyCacheTTL)
	}
	if got.CredentialLimit != httpapi.DefaultCredentialLimit || got.FailedLoginLimit != httpapi.DefaultFailedLoginLimit {
		t.Errorf("credential limits %d and %d, want the defaults", got.CredentialLimit, got.FailedLoginLimit)
	}
	if off, _ := parseServeConfig([]string{"--credential-limit", "0"}, noEnv); off.api(deps{}, "").WithDefaults().CredentialLimit >= 0 {
		t.Error("--credential-limit 0 does not turn the limit off")
	}
	if got.HandlerTimeout != c.handlerTimeout || got.BodyLimit == 0 {
		t.Errorf("handler timeout %v (flag %v), body limit %d", got.HandlerTimeout, c.handlerTimeout, got.BodyLimit)
	}
	if got.ServerURL != "http://127.0.0.1:1" {
		t.Errorf("without --public-url the document names %q, want the address it listens on", got.ServerURL)
	}
	pub, err := parseServeConfig([]string{"--public-url", "https://shop.example.com/store"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := pub.api(deps{}, "http://127.0.0.1:1").WithDefaults(); got.ServerURL != "https://shop.example.com/store" || got.PublicURL != "https://shop.example.com/store" {
		t.Errorf("with --public-url the document names %q and links start with %q, want the public URL", got.ServerURL, got.PublicURL)
	}
}

// The key cache must be on in the binary as shipped: a key revoked by another process
// keeps working for a moment (the cache), and stops within a second (the contract).
func TestServeCachesKeysForUnderASecond(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	base, _ := startServe(t, noEnv, "--database", db, "--no-bootstrap")
	other, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	acct, err := other.CreateAccount(ctx, "cache@example.com", "", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	key, prefix, hash := auth.NewKey()
	k, err := other.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "k", Prefix: prefix, Hash: hash})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := get(t, base+"/v1/categories", key); status != 200 {
		t.Fatalf("GET with a new key = %d %s", status, body)
	}
	if err := other.RevokeAPIKey(ctx, acct.ID, k.ID, petstore.Actor{}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	if status, _ := get(t, base+"/v1/categories", key); status != 200 {
		t.Errorf("a key revoked by another process failed at once (%d): the key cache is off", status)
	}
	for {
		status, _ := get(t, base+"/v1/categories", key)
		if status == 401 {
			break
		}
		if time.Since(revoked) > time.Second {
			t.Fatalf("the revoked key still answers %d after a second", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTheOperatorPortServesMetricsAndProfilesAndThePublicOneDoesNot(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	admin := freeAddr(t)
	base, out := startServe(t, noEnv, "--database", db, "--no-bootstrap", "--admin-addr", admin)
	if !strings.Contains(out.String(), "http://"+admin+"/debug/pprof/") {
		t.Errorf("serve did not print the operator address:\n%s", out)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/heap?debug=1"} {
		res, err := http.Get("http://" + admin + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("GET %s on the operator port = %d", path, res.StatusCode)
		}
	}
	for _, path := range []string{"/debug/pprof/", "/metrics"} {
		if status, _ := get(t, base+path, ""); status != 404 {
			t.Errorf("GET %s on the public port = %d, want 404", path, status)
		}
	}
}

func TestAnOperatorAddressWithoutAHostIsLoopback(t *testing.T) {
	tests := map[string]string{
		":6060":          "127.0.0.1:6060",
		"127.0.0.1:6060": "127.0.0.1:6060",
		"0.0.0.0:6060":   "0.0.0.0:6060",
		"[::1]:6060":     "[::1]:6060",
	}
	for in, want := range tests {
		if got, err := loopbackUnlessTold(in); err != nil || got != want {
			t.Errorf("loopbackUnlessTold(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := loopbackUnlessTold("6060"); err == nil {
		t.Error("an address without a port was accepted")
	}
}

// Two servers on one machine with the default operator port: the second one runs
// without the operator port instead of refusing to start.
func TestATakenDefaultOperatorPortDoesNotStopTheServer(t *testing.T) {
	if ln, err := net.Listen("tcp", defaultAdminAddr); err == nil {
		defer ln.Close() // else another process holds it, which is the case under test too
	}
	db := filepath.Join(t.TempDir(), "petstore.db")
	_, out := startServe(t, noEnv, "--database", db, "--no-bootstrap")
	if strings.Contains(out.String(), "operator") {
		t.Errorf("serve claims an operator port it could not have:\n%s", out)
	}
}

func TestTheCurrencyIsACurrencysISOCode(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"EUR", "EUR"}, {"usd", "USD"}, {"jPy", "JPY"}, {"XOF", "XOF"}, {"XAF", "XAF"}, {"XCD", "XCD"}, {"XPF", "XPF"},
		{"XAU", ""}, {"XXX", ""}, {"XTS", ""}, {"XDR", ""}, {"ABC", ""}, {"EURO", ""}, {"", ""}, {"E", ""},
	}
	for _, tt := range tests {
		got, err := checkCurrency(tt.in)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("checkCurrency(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// A database with priced orders keeps its currency: serve with another one refuses to
// start and says which one to use; with the same one it starts.
func TestServeRefusesToChangeTheCurrencyOfAShopWithOrders(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "petstore.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.CreateAccount(ctx, "buyer@example.com", "", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	if err != nil {
		t.Fatal(err)
	}
	price := int64(1999)
	p, err := db.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available, Price: &price})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetInventory(ctx, p.ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PlaceOrder(ctx, petstore.NewOrder{AccountID: a.ID, PetID: p.ID, Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A server that starts all the same is stopped, and the test fails.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = run(sctx, []string{"serve", "--addr", freeAddr(t), "--database", path, "--admin-addr", "off", "--currency", "usd"}, noEnv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--currency USD: The shop's orders are in EUR") || !strings.Contains(err.Error(), "--currency EUR") {
		t.Fatalf("serve --currency usd on a shop with orders in EUR: %v", err)
	}
}
