package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// accountsListFlags registers the flags of `petstore accounts list`, writing into database.
func accountsListFlags(database *string) *flag.FlagSet {
	fs := newFlagSet("accounts list")
	fs.StringVar(database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	return fs
}

// listAccounts prints every account, a table on stdout: what an operator reads before
// disabling one.
func listAccounts(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var database string
	fs := accountsListFlags(&database)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("accounts list", err)
	}
	if fs.NArg() > 0 {
		return usageError{cmd: "accounts list", err: fmt.Errorf("accounts list: unexpected argument %q", fs.Arg(0))}
	}
	st, err := openStore(ctx, database, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tROLE\tDISABLED\tCREATED")
	err = eachPage(func(p petstore.Page) ([]petstore.Account, error) {
		return st.Accounts(ctx, petstore.AccountFilter{}, p)
	},
		func(a petstore.Account) int64 { return a.ID },
		func(a petstore.Account) {
			disabled := "no"
			if a.Disabled {
				disabled = "yes"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", a.ID, a.Email, a.Role, disabled, a.CreatedAt.UTC().Format(time.RFC3339))
		})
	if err != nil {
		return err
	}
	return tw.Flush()
}

// disableAccount disables the account of --email, through the store's update, as
// PATCH /accounts/{id} does: under the same last-admin rule.
func disableAccount(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	st, acct, _, err := keyAccount(ctx, "accounts disable", args, 0, getenv)
	if err != nil {
		return err
	}
	defer st.Close()
	if acct.Disabled {
		fmt.Fprintf(stderr, "petstore: %s was disabled already\n", acct.Email)
		return nil
	}
	disabled := true
	_, err = st.UpdateAccount(ctx, acct.ID, petstore.AccountChange{Disabled: &disabled})
	if petstore.ErrorCode(err) == petstore.ELastAdmin {
		return fmt.Errorf("%s is the last enabled admin, so it is not disabled: make another account admin first "+
			"(petstore keys create --email E --role admin)", acct.Email)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "petstore: disabled account %d (%s)\n", acct.ID, acct.Email)
	return nil
}
