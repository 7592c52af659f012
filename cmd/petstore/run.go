package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// run is the whole program; main only gives it the process's arguments, environment
// and streams, so tests can run it with their own.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, getenv, stdout, stderr)
	case "keys":
		if len(args) == 0 || args[0] != "create" {
			return errors.New("usage: petstore keys create --email E [--role admin|customer] [--name N]")
		}
		return createKey(ctx, args[1:], getenv, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

const usage = `usage:
  petstore [serve] [flags]       run the service (petstore serve -h lists the flags)
  petstore migrate [flags]       apply database migrations and exit
  petstore keys create [flags]   create an account if needed and print a new API key`

// envAliases are further names the contract gives some variables.
var envAliases = map[string]string{
	"PETSTORE_DATABASE": "PETSTORE_DATABASE_URL",
	"PETSTORE_REDIS":    "PETSTORE_REDIS_URL",
}

// parseFlags parses args into fs after taking each flag's default from the
// environment (PETSTORE_<NAME>, or its alias), so that a flag on the command line wins.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "PETSTORE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v := getenv(name)
		if alias := envAliases[name]; v == "" && alias != "" {
			name, v = alias, getenv(alias)
		}
		if v == "" || err != nil {
			return
		}
		if r, ok := f.Value.(*repeated); ok {
			// A repeatable flag takes a comma-separated list from the environment.
			for _, part := range strings.Split(v, ",") {
				if err = r.Set(strings.TrimSpace(part)); err != nil {
					break
				}
			}
			r.fromEnv = true
		} else {
			err = f.Value.Set(v)
		}
		if err != nil {
			err = fmt.Errorf("%s=%q: %w", name, v, err)
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}

// repeated is a flag that may be given several times. Values from the command line
// replace those from the environment.
type repeated struct {
	values  []string
	fromEnv bool
}

func (r *repeated) String() string { return strings.Join(r.values, ",") }

func (r *repeated) Set(v string) error {
	if r.fromEnv {
		r.values, r.fromEnv = nil, false
	}
	r.values = append(r.values, v)
	return nil
}

const defaultDatabase = "petstore.db"

// openStore opens (creating and migrating) the database named by dsn: PostgreSQL
// for a postgres:// or postgresql:// URL, else an SQLite file. onDeliveries, when
// set, is called after a commit that queued webhook deliveries.
func openStore(ctx context.Context, dsn string, onDeliveries func()) (petstore.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		db, err := postgres.OpenWith(ctx, dsn, postgres.Options{OnDeliveries: onDeliveries})
		if err != nil {
			return nil, err // pgx keeps the password out of its errors
		}
		return db, nil
	}
	db, err := sqlite.OpenWith(ctx, dsn, sqlite.Options{OnDeliveries: onDeliveries})
	if err != nil {
		return nil, err
	}
	return db, nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("petstore migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	database := fs.String("database", defaultDatabase, "SQLite file, or a postgres:// URL")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	st, err := openStore(ctx, *database, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrations applied to %s\n", redactDSN(*database))
	return st.Close()
}

// redactDSN hides a password in a database URL (in the user part or a password
// parameter) before it is printed.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
