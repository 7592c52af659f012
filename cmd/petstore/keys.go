package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/petstore"
)

// keyOptions are the flags of `petstore keys create`.
type keyOptions struct {
	database, email, role, name string
	scopes                      repeated
	expiresIn                   time.Duration
	takeOver, create            bool
}

// keyFlags registers the flags of `petstore keys create`, writing into o.
func keyFlags(o *keyOptions) *flag.FlagSet {
	fs := newFlagSet("keys create")
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.StringVar(&o.email, "email", "", "the account's email (created, key-only, if it does not exist); required")
	fs.StringVar(&o.role, "role", "", "set the account's role: admin or customer (new accounts default to customer)")
	fs.StringVar(&o.name, "name", "cli", "what the key is for")
	fs.Var(&o.scopes, "scope", "limit the key to this `SCOPE` of the account's role: repeatable, or a comma list (pets:read,orders:write); left out, the key has every scope of the role, now and as scopes are added")
	fs.DurationVar(&o.expiresIn, "expires-in", 0, "lifetime of the key, from now (720h is 30 days); 0 for a key that never expires. serve's --key-max-lifetime does not bind the operator's keys")
	fs.BoolVar(&o.create, "create", false, createUsage)
	fs.BoolVar(&o.takeOver, "take-over", false, "remove the account's password and revoke its keys first (needed to make an account that signed up with a password admin)")
	return fs
}

func createKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o keyOptions
	fs := keyFlags(&o)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("keys create", err)
	}
	if fs.NArg() > 0 {
		return usageError{cmd: "keys create", err: fmt.Errorf("keys create: unexpected argument %q", fs.Arg(0))}
	}
	addr, err := petstore.CleanEmail(o.email)
	if err != nil {
		return usageError{cmd: "keys create", err: errors.New("--email: an email address is required")}
	}
	r := petstore.Role(o.role)
	if r != "" && !r.Valid() {
		return usageError{cmd: "keys create", err: fmt.Errorf("--role %q: want admin or customer", o.role)}
	}
	keyName, err := petstore.CleanName("name", o.name)
	if err != nil {
		return usageError{cmd: "keys create", err: fmt.Errorf("--name: %w", err)}
	}
	policy, err := documentKeyRules()
	if err != nil {
		return err
	}
	now := time.Now()
	ask, err := policy.ask(o.scopes.values, o.expiresIn, now)
	if err != nil {
		return usageError{cmd: "keys create", err: err}
	}
	// Refuse what the role does not allow before anything is opened or written, when
	// the command line names the role; else once the account's role is read.
	role := r
	if role != "" {
		if _, err := policy.decide(ask, role, now); err != nil {
			return usageError{cmd: "keys create", err: err}
		}
	}
	st, err := openExisting(ctx, o.database, &o.create)
	if err != nil {
		return err
	}
	defer st.Close()
	if role, err = accountRole(ctx, st, o.email, addr, role); err != nil {
		return err
	}
	grant, err := policy.decide(ask, role, now)
	if err != nil {
		return usageError{cmd: "keys create", err: err}
	}
	if o.takeOver {
		if err := st.TakeOverAccount(ctx, addr); err != nil && petstore.ErrorCode(err) != petstore.ENotFound {
			return err
		}
	}
	acct, err := st.EnsureAccount(ctx, addr, r)
	if err != nil {
		var e *petstore.Error
		if errors.As(err, &e) {
			return errors.New(e.Message)
		}
		return err
	}
	if acct.Role != role {
		// Another process changed the account's role since it was read.
		if grant, err = policy.decide(ask, acct.Role, now); err != nil {
			return usageError{cmd: "keys create", err: err}
		}
	}
	key, err := issueGrantedKey(ctx, st, acct.ID, keyName, grant)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, key)
	if ask.Scopes != nil || ask.ExpiresAt != nil {
		// Scripts read the key alone on stdout; what it may do is for the operator's eyes.
		fmt.Fprintf(stderr, "petstore: made a key for %s (%s): %s\n", acct.Email, acct.Role, describeGrant(grant))
	}
	return nil
}

// keyRules are what the operator's keys may be granted: the scopes of the document's
// catalogue, and those each role allows, read as the HTTP layer reads them
// (api.RoleScopes of api.Operations), so that the command and POST /api-keys cannot
// disagree.
type keyRules struct {
	scopes  []string            // the catalogue, in document order
	allowed map[string][]string // by role
}

func documentKeyRules() (keyRules, error) {
	ops, err := api.Operations()
	if err != nil {
		return keyRules{}, err
	}
	catalogue, err := api.Scopes()
	if err != nil {
		return keyRules{}, err
	}
	p := keyRules{allowed: api.RoleScopes(ops)}
	for _, s := range catalogue {
		p.scopes = append(p.scopes, s.Name)
	}
	return p, nil
}

// ask reads --scope and --expires-in into the grant asked for, refusing what no role
// could be granted: an unknown scope, an empty list, a lifetime under a second (dates
// are kept to the second).
func (p keyRules) ask(scopeFlags []string, expiresIn time.Duration, now time.Time) (petstore.KeyGrant, error) {
	var ask petstore.KeyGrant
	if len(scopeFlags) > 0 {
		ask.Scopes = []string{}
		for _, list := range scopeFlags {
			for _, s := range splitList(list) {
				if !slices.Contains(p.scopes, s) {
					return petstore.KeyGrant{}, fmt.Errorf("--scope %q: no such scope; the scopes are %s", s, strings.Join(p.scopes, ", "))
				}
				ask.Scopes = append(ask.Scopes, s)
			}
		}
		if len(ask.Scopes) == 0 {
			return petstore.KeyGrant{}, errors.New("--scope: name at least one scope, or leave it out for every scope of the role")
		}
	}
	switch {
	case expiresIn < 0:
		return petstore.KeyGrant{}, fmt.Errorf("--expires-in %v: want 0 (never) or a positive duration", expiresIn)
	case expiresIn > 0 && expiresIn < time.Second:
		return petstore.KeyGrant{}, fmt.Errorf("--expires-in %v: want 0 (never) or at least 1s", expiresIn)
	case expiresIn > 0:
		at := now.Add(expiresIn).UTC().Truncate(time.Second)
		ask.ExpiresAt = &at
	}
	return ask, nil
}

// decide grants ask to a key of an account with role, as POST /api-keys would to a
// maker holding every scope of the role without expiry (the operator), and not bound
// by serve's --key-max-lifetime. A refusal names the flag and what the role allows.
func (p keyRules) decide(ask petstore.KeyGrant, role petstore.Role, now time.Time) (petstore.KeyGrant, error) {
	grant, err := ask.Decide(petstore.Principal{Role: role}, p.allowed[string(role)], now, 0)
	var e *petstore.Error
	if err == nil || !errors.As(err, &e) || len(e.Details) == 0 {
		return grant, err
	}
	if e.Details[0].Field == "scopes" {
		var allowed []string
		for _, s := range p.scopes {
			if slices.Contains(p.allowed[string(role)], s) {
				allowed = append(allowed, s)
			}
		}
		return petstore.KeyGrant{}, fmt.Errorf("--scope: %s (the %s role allows %s)", e.Details[0].Problem, role, strings.Join(allowed, ", "))
	}
	return petstore.KeyGrant{}, fmt.Errorf("--expires-in: the expiry %s", e.Details[0].Problem)
}

// accountRole reads the account with address addr once: the role it has, or the one
// asked for (customer when none) if the command is about to make it: a key-only
// account, held to the policy of a new account as a sign-up is (petstore.SignUp, on
// the address as sent). An account that exists keeps the address it has, from before
// the policy or not.
func accountRole(ctx context.Context, st petstore.AccountStore, sent, addr string, asked petstore.Role) (petstore.Role, error) {
	a, _, err := st.AccountByEmail(ctx, addr)
	switch {
	case petstore.ErrorCode(err) == petstore.ENotFound:
		if _, err := (petstore.SignUp{Email: sent, KeyOnly: true}).Check(); err != nil {
			return "", usageError{cmd: "keys create", err: fmt.Errorf("--email: %w", err)}
		}
		return petstore.AccountRole(asked)
	case err != nil:
		return "", err
	case asked != "":
		return asked, nil
	}
	return a.Role, nil
}

// describeGrant says what a key may do and until when, for the operator.
func describeGrant(g petstore.KeyGrant) string {
	what := "it may use every scope of the role"
	if g.Scopes != nil {
		what = "it may use " + strings.Join(g.Scopes, ", ")
	}
	until := "never expires"
	if g.ExpiresAt != nil {
		until = "expires at " + g.ExpiresAt.Format(time.RFC3339)
	}
	return what + " and " + until
}

// issueKey makes and stores a new API key for an account, with every scope of its role
// and no expiry, and returns its secret.
func issueKey(ctx context.Context, st petstore.KeyStore, accountID int64, name string) (string, error) {
	return issueGrantedKey(ctx, st, accountID, name, petstore.KeyGrant{})
}

// issueGrantedKey makes and stores a new API key with the scopes and expiry of grant,
// as KeyGrant.Decide gave them, and returns its secret.
func issueGrantedKey(ctx context.Context, st petstore.KeyStore, accountID int64, name string, grant petstore.KeyGrant) (string, error) {
	key, prefix, hash := auth.NewKey()
	if _, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: accountID, Name: name, Prefix: prefix, Hash: hash,
		Scopes: grant.Scopes, ExpiresAt: grant.ExpiresAt}); err != nil {
		return "", err
	}
	return key, nil
}
