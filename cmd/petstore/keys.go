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

func createKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("petstore keys create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	database := fs.String("database", defaultDatabase, "SQLite file, or a postgres:// URL")
	email := fs.String("email", "", "the account's email (created, key-only, if it does not exist)")
	role := fs.String("role", "", "set the account's role: admin or customer (new accounts default to customer)")
	name := fs.String("name", "cli", "what the key is for")
	takeOver := fs.Bool("take-over", false, "remove the account's password and revoke its keys first (needed to make an account that signed up with a password admin)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	addr, err := petstore.CleanEmail(*email)
	if err != nil {
		return errors.New("--email: an email address is required")
	}
	// The account may be made here: its email follows the text policy of addresses,
	// as a sign-up's does.
	if err := petstore.CheckAddress("email", addr); err != nil {
		return fmt.Errorf("--email: %w", err)
	}
	r := petstore.Role(*role)
	if r != "" && !r.Valid() {
		return fmt.Errorf("--role %q: want admin or customer", *role)
	}
	keyName, err := petstore.CleanName("name", *name)
	if err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	st, err := openStore(ctx, *database, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if *takeOver {
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
