package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// run is the whole program; main only gives it the process's arguments, environment
// and streams, so tests can run it with their own. Help goes to stdout and is no
// error; a command line it cannot follow is a usageError.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch {
		case isHelp(args[0]):
			writeUsage(stdout)
			return nil
		case args[0] == "help":
			return help(args[1:], stdout)
		case args[0] == "-version" || args[0] == "--version":
			args = append([]string{"version"}, args[1:]...)
		}
	}
	c, args, err := findCommand(args)
	if err != nil {
		return err
	}
	err = c.run(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(stdout, c)
		return nil
	}
	return err
}

// envName is the environment variable of a flag: PETSTORE_ and its name in upper
// case with - as _.
func envName(flagName string) string {
	return "PETSTORE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envAliases are further names the contract gives some variables.
var envAliases = map[string]string{
	"PETSTORE_DATABASE": "PETSTORE_DATABASE_URL",
	"PETSTORE_REDIS":    "PETSTORE_REDIS_URL",
}

// parseFlags parses args into fs, then gives every flag that args did not set its
// value from the environment (PETSTORE_<NAME>, or its alias): a flag on the command
// line wins. -h comes back as flag.ErrHelp, whatever the environment holds.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		name := envName(f.Name)
		v := getenv(name)
		if alias := envAliases[name]; v == "" && alias != "" {
			name, v = alias, getenv(alias)
		}
		if v == "" {
			return
		}
		if r, ok := f.Value.(*repeated); ok {
			// A repeatable flag takes a comma-separated list from the environment.
			for _, part := range strings.Split(v, ",") {
				if err = r.Set(strings.TrimSpace(part)); err != nil {
					break
				}
			}
		} else {
			err = f.Value.Set(v)
		}
		if err != nil {
			err = fmt.Errorf("%s=%q: %w", name, v, err)
		}
	})
	return err
}

// repeated is a flag that may be given several times. The environment's list is used
// only when the command line gives none (parseFlags).
type repeated struct {
	values []string
}

func (r *repeated) String() string { return strings.Join(r.values, ",") }

func (r *repeated) Set(v string) error {
	r.values = append(r.values, v)
	return nil
}

const defaultDatabase = "petstore.db"

// openStore opens (creating and migrating) the database named by dsn for an
// operator's command: PostgreSQL for a postgres:// or postgresql:// URL, else an
// SQLite file, which it leaves to the servers to checkpoint (sqlite.Options.ShortLived).
func openStore(ctx context.Context, dsn string) (petstore.Store, error) {
	return openStoreWith(ctx, dsn, storeHooks{shortLived: true})
}

// storeHooks are what a serving store is wired to: wake after every commit that gave
// the webhook dispatcher work, feed after every commit that wrote events (the event
// streams' reader, httpapi.Server.WakeStreams), and the tracer of its batches of
// orders (nil: none).
type storeHooks struct {
	wake, feed func()
	tracer     trace.TracerProvider
	// shortLived: an operator's command, not a server (sqlite.Options.ShortLived).
	shortLived bool
}

// openStoreWith is openStore with the hooks of a serving store.
func openStoreWith(ctx context.Context, dsn string, h storeHooks) (petstore.Store, error) {
	if isPostgres(dsn) {
		db, err := postgres.OpenWith(ctx, dsn, postgres.Options{WakeDispatcher: h.wake, WakeFeed: h.feed, Tracer: h.tracer})
		if err != nil {
			return nil, hideURL(err, dsn) // pgx hides the password too
		}
		return db, nil
	}
	db, err := sqlite.OpenWith(ctx, dsn, sqlite.Options{WakeDispatcher: h.wake, WakeFeed: h.feed, Tracer: h.tracer, ShortLived: h.shortLived})
	if err != nil {
		// A mistyped URL ("postgress://app:pw@db/shop") is taken for a file name,
		// which the error quotes.
		return nil, hideURL(err, dsn)
	}
	return db, nil
}

// isPostgres reports whether dsn names a PostgreSQL database rather than an SQLite file.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openExisting opens the database of an operator's command (every command but serve,
// which makes its database): an SQLite file that does not exist is refused, naming the
// absolute path looked at, so that a mistyped --database or another working directory
// never gets a new database, with a key or an invitation in it that the server never
// sees. create is the command's --create, which makes the file; nil for a command
// without one (a list or a revoke has nothing to do on a new database). PostgreSQL
// databases are never created by the service.
func openExisting(ctx context.Context, dsn string, create *bool) (petstore.Store, error) {
	if isPostgres(dsn) || (create != nil && *create) {
		return openStore(ctx, dsn)
	}
	db, err := sqlite.OpenWith(ctx, dsn, sqlite.Options{MustExist: true, ShortLived: true})
	if errors.Is(err, sqlite.ErrNoDatabase) {
		abs, aerr := filepath.Abs(dsn)
		if aerr != nil {
			abs = dsn
		}
		hint := ""
		if create != nil {
			hint = "; --create makes a new one there"
		}
		return nil, fmt.Errorf("no database at %s: --database names the SQLite file `petstore serve` uses (%s in the directory it runs in, unless told otherwise)%s",
			abs, defaultDatabase, hint)
	}
	if err != nil {
		return nil, hideURL(err, dsn)
	}
	return db, nil
}

// createUsage is the help of --create, the same for every command that has it.
const createUsage = "make the SQLite file if it does not exist (without it the command refuses, naming the file it looked for)"

// migrateFlags registers the flags of `petstore migrate`.
func migrateFlags(database *string) *flag.FlagSet {
	fs := newFlagSet("migrate")
	fs.StringVar(database, "database", defaultDatabase, "SQLite file (made if it does not exist), or a postgres:// URL")
	return fs
}

// migrate makes the database ready for serve: like serve, and unlike the commands
// that put things in a database, it makes a missing SQLite file, since preparing
// one before the first start (a deploy step, a benchmark's setup) is its job. It
// names the file it worked on, so a wrong directory shows.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	database := new(string)
	fs := migrateFlags(database)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("migrate", err)
	}
	if fs.NArg() > 0 {
		return usageError{cmd: "migrate", err: fmt.Errorf("migrate: unexpected argument %q", fs.Arg(0))}
	}
	st, err := openStore(ctx, *database)
	if err != nil {
		return err
	}
	where := redactDSN(*database)
	if !isPostgres(*database) {
		if abs, err := filepath.Abs(*database); err == nil {
			where = abs
		}
	}
	fmt.Fprintf(stdout, "migrations applied to %s\n", where)
	return st.Close()
}
