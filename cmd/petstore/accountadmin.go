package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/acme-pets/petstore/internal/invite"
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
	st, err := openExisting(ctx, database, nil)
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

// enableAccount enables the account of --email again, through the store's update.
func enableAccount(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	st, acct, _, err := keyAccount(ctx, "accounts enable", args, 0, getenv)
	if err != nil {
		return err
	}
	defer st.Close()
	if !acct.Disabled {
		fmt.Fprintf(stderr, "petstore: %s was enabled already\n", acct.Email)
		return nil
	}
	enabled := false
	if _, err := st.UpdateAccount(ctx, acct.ID, petstore.AccountChange{Disabled: &enabled}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "petstore: enabled account %d (%s)\n", acct.ID, acct.Email)
	return nil
}

// inviteOptions are the flags of `petstore accounts invite`.
type inviteOptions struct {
	database, email, role, publicURL, smtpURL, smtpFrom string
	create                                              bool
}

// inviteFlags registers the flags of `petstore accounts invite`, writing into o.
func inviteFlags(o *inviteOptions) *flag.FlagSet {
	fs := newFlagSet("accounts invite")
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.StringVar(&o.email, "email", "", "the person's email; required")
	fs.StringVar(&o.role, "role", string(petstore.Admin), "the role the account gets: admin or customer")
	fs.StringVar(&o.publicURL, "public-url", "http://"+defaultAddr, "the URL people reach the service at, as serve's --public-url: the link starts with it")
	fs.StringVar(&o.smtpURL, "smtp-url", "", "SMTP server to mail the link through, as serve's --smtp-url (put it in the environment); without it the link is only printed")
	fs.StringVar(&o.smtpFrom, "smtp-from", "", "From address of the mail, as serve's --smtp-from")
	fs.BoolVar(&o.create, "create", false, createUsage)
	return fs
}

// inviteAccount prints a one-time invitation link on stdout, as POST /invitations
// answers it.
func inviteAccount(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o inviteOptions
	fs := inviteFlags(&o)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("accounts invite", err)
	}
	if fs.NArg() > 0 {
		return usageError{cmd: "accounts invite", err: fmt.Errorf("accounts invite: unexpected argument %q", fs.Arg(0))}
	}
	email, err := petstore.CleanNewEmail(o.email)
	if err != nil {
		return usageError{cmd: "accounts invite", err: errors.New("--email: an email address is required")}
	}
	role := petstore.Role(o.role)
	if !role.Valid() {
		return usageError{cmd: "accounts invite", err: fmt.Errorf("--role %q: want admin or customer", o.role)}
	}
	if err := checkPublicURL(o.publicURL); err != nil || o.publicURL == "" {
		return usageError{cmd: "accounts invite", err: fmt.Errorf("--public-url %q: want an http:// or https:// URL such as https://shop.example.com", o.publicURL)}
	}
	sender, err := serveConfig{addr: defaultAddr, publicURL: o.publicURL, smtpURL: o.smtpURL, smtpFrom: o.smtpFrom}.mailer()
	if err != nil {
		return usageError{cmd: "accounts invite", err: err}
	}
	st, err := openExisting(ctx, o.database, &o.create)
	if err != nil {
		return err
	}
	defer st.Close()
	inv, link, err := invite.Create(ctx, st, o.publicURL, email, role, time.Now())
	if err != nil {
		if petstore.ErrorCode(err) == petstore.EConflict {
			return fmt.Errorf("%s already has a password: it signs in with it (a forgotten one is reset by mail); change its role with PATCH /accounts/{id}", email)
		}
		return err
	}
	fmt.Fprintln(stdout, link)
	fmt.Fprintf(stderr, "petstore: invited %s as %s; the link works once, until %s\n", inv.Email, inv.Role, inv.ExpiresAt.UTC().Format(time.RFC3339))
	if sender == nil {
		return nil
	}
	if err := sender.Send(ctx, invite.Mail(inv.Email, inv.Role, link, inv.ExpiresAt)); err != nil {
		return fmt.Errorf("the invitation is made (the link above works), but mailing it failed: %w", err)
	}
	fmt.Fprintf(stderr, "petstore: mailed the link to %s\n", inv.Email)
	return nil
}
