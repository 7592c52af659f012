package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// keyAccountOptions are the flags of `petstore keys list` and `petstore keys revoke`.
type keyAccountOptions struct{ database, email string }

// keyAccountFlags registers the flags of the keys command name, writing into o.
func keyAccountFlags(name string, o *keyAccountOptions) *flag.FlagSet {
	fs := newFlagSet(name)
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.StringVar(&o.email, "email", "", "the account's email; required")
	return fs
}

// keyAccount parses the arguments of the keys command name and opens the store and
// the account of --email; the rest are the positional arguments, want of them.
func keyAccount(ctx context.Context, name string, args []string, want int, getenv func(string) string) (petstore.Store, petstore.Account, []string, error) {
	var o keyAccountOptions
	fs := keyAccountFlags(name, &o)
	// Flags may come after the arguments too (`keys revoke 7 --email E`): the flag
	// package stops at the first argument, so parsing goes on after each.
	var rest []string
	for {
		if err := parseFlags(fs, args, getenv); err != nil {
			return nil, petstore.Account{}, nil, badUsage(name, err)
		}
		if fs.NArg() == 0 {
			break
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
	if len(rest) != want {
		return nil, petstore.Account{}, nil, usageError{cmd: name, err: fmt.Errorf("%s: want %d argument(s), got %d", name, want, len(rest))}
	}
	addr, err := petstore.CleanEmail(o.email)
	if err != nil {
		return nil, petstore.Account{}, nil, usageError{cmd: name, err: errors.New("--email: an email address is required")}
	}
	st, err := openExisting(ctx, o.database, nil)
	if err != nil {
		return nil, petstore.Account{}, nil, err
	}
	acct, _, err := st.AccountByEmail(ctx, addr)
	if petstore.ErrorCode(err) == petstore.ENotFound {
		err = fmt.Errorf("no account has the email %s", addr)
	}
	if err != nil {
		st.Close()
		return nil, petstore.Account{}, nil, err
	}
	return st, acct, rest, nil
}

// listKeys prints the account's live keys, a table on stdout: what an operator reads
// before revoking one.
func listKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	st, acct, _, err := keyAccount(ctx, "keys list", args, 0, getenv)
	if err != nil {
		return err
	}
	defer st.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tSCOPES\tCREATED\tEXPIRES\tLAST USED")
	err = eachPage(func(p petstore.Page) ([]petstore.APIKey, error) { return st.APIKeys(ctx, acct.ID, p) },
		func(k petstore.APIKey) int64 { return k.ID },
		func(k petstore.APIKey) {
			scopes := "(every scope of the role)"
			if k.Scopes != nil {
				scopes = strings.Join(k.Scopes, ",")
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, scopes,
				k.CreatedAt.UTC().Format(time.RFC3339), when(k.ExpiresAt, "never"), when(k.LastUsedAt, "never"))
		})
	if err != nil {
		return err
	}
	return tw.Flush()
}

// eachPage calls each for every item that fetch lists, page after page, in id order:
// what the list commands print.
func eachPage[T any](fetch func(petstore.Page) ([]T, error), id func(T) int64, each func(T)) error {
	page := petstore.Page{Limit: 100}
	for {
		items, err := fetch(page)
		if err != nil {
			return err
		}
		for _, it := range items {
			each(it)
		}
		if len(items) < page.Size() {
			return nil
		}
		page.After = id(items[len(items)-1])
	}
}

// when is t in RFC 3339, or none for nil.
func when(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}

// revokeFlags registers the flags of `petstore keys revoke`: --email is optional there.
func revokeFlags(o *keyAccountOptions) *flag.FlagSet {
	fs := newFlagSet("keys revoke")
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.StringVar(&o.email, "email", "", "the account the key must belong to (a check; optional)")
	return fs
}

// revokeKey revokes one live key by its id, as the operator (its api_key.revoked
// event says so), through the store's revoke path, as DELETE /api-keys/{id} does.
// With --email, the key must be that account's.
func revokeKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o keyAccountOptions
	fs := revokeFlags(&o)
	rest, err := parseInterleaved(fs, args, getenv)
	if err != nil {
		return badUsage("keys revoke", err)
	}
	if len(rest) != 1 {
		return usageError{cmd: "keys revoke", err: fmt.Errorf("keys revoke: want 1 argument (the key id), got %d", len(rest))}
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id < 1 {
		return usageError{cmd: "keys revoke", err: fmt.Errorf("keys revoke: %q is not a key id (a positive integer, as `petstore keys list` shows)", rest[0])}
	}
	if o.email != "" {
		// The old form, with its check: the account's key, or nothing.
		return revokeKeyOf(ctx, args, getenv, stderr, id)
	}
	st, err := openExisting(ctx, o.database, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	owner, err := st.RevokeKey(ctx, id)
	if petstore.ErrorCode(err) == petstore.ENotFound {
		return fmt.Errorf("no live key %d (unknown, or revoked already)", id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "petstore: revoked key %d of account %d\n", id, owner)
	return nil
}

// revokeKeyOf revokes key id of the account of --email (in args).
func revokeKeyOf(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, id int64) error {
	st, acct, _, err := keyAccount(ctx, "keys revoke", args, 1, getenv)
	if err != nil {
		return err
	}
	defer st.Close()
	err = st.RevokeAPIKey(ctx, acct.ID, id, petstore.Actor{})
	if petstore.ErrorCode(err) == petstore.ENotFound {
		return fmt.Errorf("%s has no live key %d (unknown, another account's, or revoked already)", acct.Email, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "petstore: revoked key %d of %s\n", id, acct.Email)
	return nil
}

// parseInterleaved parses fs over args with flags before, between or after the
// positional arguments (`keys revoke 7 --email E`): the flag package stops at the
// first argument, so parsing goes on after each. It returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string, getenv func(string) string) ([]string, error) {
	var rest []string
	for {
		if err := parseFlags(fs, args, getenv); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
}
