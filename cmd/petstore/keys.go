package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/petstore"
)

// keyOptions are the flags of `petstore keys create`.
type keyOptions struct {
	database, email, role, name string
	takeOver                    bool
}

// keyFlags registers the flags of `petstore keys create`, writing into o.
func keyFlags(o *keyOptions) *flag.FlagSet {
	fs := newFlagSet("keys create")
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.StringVar(&o.email, "email", "", "the account's email (created, key-only, if it does not exist); required")
	fs.StringVar(&o.role, "role", "", "set the account's role: admin or customer (new accounts default to customer)")
	fs.StringVar(&o.name, "name", "cli", "what the key is for")
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
	// The account may be made here: its email follows the text policy of addresses,
	// as a sign-up's does.
	if err := petstore.CheckAddress("email", addr); err != nil {
		return usageError{cmd: "keys create", err: fmt.Errorf("--email: %w", err)}
	}
	r := petstore.Role(o.role)
	if r != "" && !r.Valid() {
		return usageError{cmd: "keys create", err: fmt.Errorf("--role %q: want admin or customer", o.role)}
	}
	keyName, err := petstore.CleanName("name", o.name)
	if err != nil {
		return usageError{cmd: "keys create", err: fmt.Errorf("--name: %w", err)}
	}
	st, err := openStore(ctx, o.database, nil)
	if err != nil {
		return err
	}
	defer st.Close()
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
	key, err := issueKey(ctx, st, acct.ID, keyName)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, key)
	return nil
}

// issueKey makes and stores a new API key for an account and returns its secret.
func issueKey(ctx context.Context, st petstore.KeyStore, accountID int64, name string) (string, error) {
	key, prefix, hash := auth.NewKey()
	if _, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: accountID, Name: name, Prefix: prefix, Hash: hash}); err != nil {
		return "", err
	}
	return key, nil
}
