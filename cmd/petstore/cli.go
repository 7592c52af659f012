package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// command is one command of petstore: what its help says, the flags it takes, and
// what it does. Each command parses its arguments with the flag set that flags makes,
// so that its help and its parsing cannot disagree.
type command struct {
	name    string // as typed: "serve", "keys create"
	args    string // after the name in the usage line: "[flags]"
	summary string // one line, for the list of commands
	about   string // a paragraph, for the command's own help
	flags   func() *flag.FlagSet
	run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{{
		name: "serve", args: "[flags]",
		summary: "run the service (what a bare `petstore` does)",
		about: "Runs the API, its docs and console, and the operator port until SIGINT or SIGTERM.\n" +
			"With --tls-cert and --tls-key it serves HTTPS, and SIGHUP reads the files again; with\n" +
			"--tls-domain it gets its certificates through ACME (Let's Encrypt).\n" +
			"It listens on loopback unless told otherwise: --addr :8080 (or PETSTORE_ADDR=0.0.0.0:8080)\n" +
			"listens on every interface, as a container or a server behind a load balancer needs.",
		flags: func() *flag.FlagSet { return serveFlags(new(serveConfig)) },
		run:   serve,
	}, {
		name: "migrate", args: "[flags]",
		summary: "apply the database migrations and exit",
		about: "Applies the migrations and exits, making an SQLite file that does not exist, as serve does.\n" +
			"Every command that opens the database migrates it first anyway.",
		flags: func() *flag.FlagSet { return migrateFlags(new(string)) },
		run:   migrate,
	}, {
		name: "keys create", args: "--email E [flags]",
		summary: "create an account if needed and print a new API key",
		about: "Creates the account if needed (key-only, no password) and prints only the new key on stdout.\n" +
			"It never makes admin an account that signed up with a password; --take-over does, after\n" +
			"removing that password and revoking the account's keys. --scope limits the key to some of\n" +
			"the role's scopes and --expires-in gives it a lifetime, as POST /api-keys does; serve's\n" +
			"--key-max-lifetime does not bind the operator's keys. An SQLite file that does not exist is\n" +
			"refused, naming the path looked at (run it where serve runs, or give --database), unless --create.",
		flags: func() *flag.FlagSet { return keyFlags(new(keyOptions)) },
		run:   createKey,
	}, {
		name: "keys list", args: "--email E [flags]",
		summary: "list an account's live API keys",
		about: "Prints a table of the account's live keys on stdout: id, name, prefix, scopes, when each was\n" +
			"made, when it expires and when it was last used (to the minute).",
		flags: func() *flag.FlagSet { return keyAccountFlags("keys list", new(keyAccountOptions)) },
		run:   listKeys,
	}, {
		name: "keys revoke", args: "ID [--email E]",
		summary: "revoke an API key by id",
		about: "Revokes the live key ID (as `petstore keys list` shows it), whichever account holds it, as the\n" +
			"operator: its api_key.revoked event says so. --email, when given, is a check: the key must be\n" +
			"that account's. A running server refuses the key within a second (its key cache). An unknown\n" +
			"id, a key revoked already, or (with --email) another account's key exits 1.",
		flags: func() *flag.FlagSet { return revokeFlags(new(keyAccountOptions)) },
		run:   revokeKey,
	}, {
		name: "accounts list", args: "[flags]",
		summary: "list the accounts",
		about:   "Prints a table of every account on stdout: id, email, role, whether it is disabled, and when it was made.",
		flags:   func() *flag.FlagSet { return accountsListFlags(new(string)) },
		run:     listAccounts,
	}, {
		name: "accounts disable", args: "--email E",
		summary: "disable an account: its keys and password stop",
		about: "Disables the account, as PATCH /accounts/{id} does: a running server refuses its keys within a\n" +
			"second (its key cache) and its password at once. Its keys are kept; an admin enables it again\n" +
			"with PATCH /accounts/{id}. The last enabled admin is not disabled (exit 1); an unknown email exits 1.",
		flags: func() *flag.FlagSet { return keyAccountFlags("accounts disable", new(keyAccountOptions)) },
		run:   disableAccount,
	}, {
		name: "accounts enable", args: "--email E",
		summary: "enable a disabled account again",
		about: "Enables the account, as PATCH /accounts/{id} with {\"disabled\": false} does: its keys and\n" +
			"password work again. An account enabled already is left as it is; an unknown email exits 1.",
		flags: func() *flag.FlagSet { return keyAccountFlags("accounts enable", new(keyAccountOptions)) },
		run:   enableAccount,
	}, {
		name: "accounts invite", args: "--email E [flags]",
		summary: "invite a person: print a one-time link that sets a password",
		about: "Prints on stdout a one-time link (--public-url's /console/accept, 7 days) with which the person\n" +
			"chooses a password and signs in to the console, as POST /invitations does. The account gets\n" +
			"--role (admin unless told) when the link is used; a new invitation replaces the open one. An\n" +
			"account that has a password is not invited (exit 1): it resets its password by mail instead.\n" +
			"An SQLite file that does not exist is refused, naming the path looked at, unless --create.",
		flags: func() *flag.FlagSet { return inviteFlags(new(inviteOptions)) },
		run:   inviteAccount,
	}, {
		name: "backup", args: "--to FILE [flags]",
		summary: "copy the live SQLite database into a checked backup file",
		about: "Copies the SQLite database, while servers keep serving it, as of one instant (VACUUM INTO, one read\n" +
			"transaction), into FILE: written beside it under a temporary name, synced, then renamed, so that FILE\n" +
			"is a whole backup or none. The copy is checked (integrity_check, its migration) and what it holds is\n" +
			"printed, with its instant: every order acknowledged before it is in the copy. FILE must not exist\n" +
			"unless --force. On PostgreSQL use pg_dump (docs/OPERATING.md#backups).",
		flags: func() *flag.FlagSet { return backupFlags(new(backupOptions)) },
		run:   backupCmd,
	}, {
		name: "restore", args: "--from FILE [flags]",
		summary: "put a checked backup in place of the SQLite database",
		about: "Checks the backup (integrity_check; a petstore database of a migration this build knows), then puts it\n" +
			"in place of the database atomically, keeping the database it replaces as\n" +
			"<database>.before-restore-<UTC time> unless --discard-current. It refuses while any petstore process\n" +
			"has the database open (each holds a shared lock on <database>.lock): stop the servers first.\n" +
			"On PostgreSQL use pg_restore or psql (docs/OPERATING.md#backups).",
		flags: func() *flag.FlagSet { return restoreFlags(new(restoreOptions)) },
		run:   restoreCmd,
	}, {
		name: "replica restore", args: "--from URL --to FILE [--timestamp T]",
		summary: "restore the database from its continuous copy (serve --replicate-to)",
		about: "Writes the database that the replica at --from held, at its latest or as it was at --timestamp,\n" +
			"to the new SQLite file --to, which `petstore serve --database FILE` then serves (copying it on\n" +
			"with --replicate-to to a new place or prefix). It prints the span of time the replica holds.",
		flags: func() *flag.FlagSet { return replicaRestoreFlags(new(replicaRestoreOptions)) },
		run:   replicaRestore,
	}, {
		name: "version", args: "",
		summary: "print the version and VCS revision",
		about:   "Prints the module version, the VCS revision and time, and whether the tree was modified.",
		flags:   func() *flag.FlagSet { return newFlagSet("version") },
		run:     printVersion,
	}}
}

// findCommand finds the command that args name and returns the rest of args. A
// first argument that is a flag, or none, is serve's.
func findCommand(args []string) (command, []string, error) {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
		if name == "keys" {
			switch {
			case len(args) > 0 && (args[0] == "create" || args[0] == "list" || args[0] == "revoke"):
				name, args = "keys "+args[0], args[1:]
			case len(args) > 0 && isHelp(args[0]):
				name = "keys create" // its first subcommand; let it print its help
			default:
				return command{}, nil, usageError{cmd: "keys", err: errors.New("want `petstore keys create --email E`, `keys list --email E` or `keys revoke ID`")}
			}
		}
		if name == "accounts" {
			switch {
			case len(args) > 0 && (args[0] == "list" || args[0] == "disable" || args[0] == "enable" || args[0] == "invite"):
				name, args = "accounts "+args[0], args[1:]
			case len(args) > 0 && isHelp(args[0]):
				name = "accounts list" // its first subcommand; let it print its help
			default:
				return command{}, nil, usageError{cmd: "accounts list", err: errors.New("want `petstore accounts list`, `accounts invite --email E`, `accounts disable --email E` or `accounts enable --email E`")}
			}
		}
		if name == "replica" {
			if len(args) == 0 || args[0] != "restore" && !isHelp(args[0]) {
				return command{}, nil, usageError{cmd: "replica restore", err: errors.New("want `petstore replica restore --from URL --to FILE`")}
			}
			name = "replica restore"
			if args[0] == "restore" {
				args = args[1:]
			}
		}
	}
	for _, c := range commands() {
		if c.name == name {
			return c, args, nil
		}
	}
	return command{}, nil, usageError{err: fmt.Errorf("unknown command %q", name)}
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// help answers `petstore help [command]`: the list of commands, or one command's help.
func help(args []string, stdout io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		writeUsage(stdout)
		return nil
	}
	if len(args) == 1 && args[0] == "keys" {
		args = []string{"keys", "create"} // its first subcommand
	}
	if len(args) == 1 && args[0] == "accounts" {
		args = []string{"accounts", "list"} // its first subcommand
	}
	c, rest, err := findCommand(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 && !isHelp(rest[0]) {
		return usageError{err: fmt.Errorf("help %s: unexpected argument %q", c.name, rest[0])}
	}
	writeHelp(stdout, c)
	return nil
}

// writeUsage writes the list of commands.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "petstore runs the Pet Store API service.\n\nUsage:\n")
	for _, c := range commands() {
		line := "petstore " + c.name
		if c.name == "serve" {
			line = "petstore [serve]"
		}
		fmt.Fprintf(w, "  %-40s %s\n", strings.TrimSpace(line+" "+c.args), c.summary)
	}
	fmt.Fprintf(w, "  %-40s %s\n\n", "petstore help [command]", "list the commands, or a command's flags")
	fmt.Fprint(w, "Every flag can also be set in the environment: PETSTORE_ and the flag's name in upper\n"+
		"case with - as _ (--rate-limit is PETSTORE_RATE_LIMIT). A flag given wins.\n"+
		"`petstore help COMMAND` or `petstore COMMAND --help` lists a command's flags.\n"+
		"`petstore --version` is `petstore version`.\n")
}

// writeHelp writes one command's usage line, what it does, and its flags: each as
// --name, with its environment variable and default.
func writeHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", strings.TrimSpace("petstore "+c.name+" "+c.args), c.about)
	fs := c.flags()
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags (each also read from its environment variable; a flag given wins):\n")
			first = false
		}
		typ, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if typ != "" {
			head += " " + typ
		}
		facts := envName(f.Name)
		if alias := envAliases[facts]; alias != "" {
			facts += " or " + alias
		}
		if f.DefValue != "" && f.DefValue != "false" {
			facts += ", default " + f.DefValue
		}
		fmt.Fprintf(w, "%-32s  %s\n", head, facts)
		for _, line := range wrap(usage, 72) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	})
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// newFlagSet makes the flag set of a command. It prints nothing: parse errors are
// returned, and reported once (exit), and -h is answered with the command's help.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("petstore "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// usageError is a command line that petstore cannot follow: an unknown command, an
// unknown flag, a value the command refuses before it opens anything. It exits 2,
// with a pointer to the help.
type usageError struct {
	cmd string // the command whose help to point at; "" for the list of commands
	err error
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// badUsage marks err, returned while cmd read its arguments, as a usage error.
func badUsage(cmd string, err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{cmd: cmd, err: err}
}

// flagNames makes the flag package's messages name flags as the help does (--addr).
var flagNames = strings.NewReplacer("defined: -", "defined: --", "for flag -", "for flag --",
	"value for -", "value for --", "argument: -", "argument: --")

// exit reports how run ended on stderr and returns the process's exit code: 0 for
// success, 2 for a command line it could not follow, 1 for any other failure.
func exit(err error, stderr io.Writer) int {
	var u usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		hint := "petstore --help"
		if u.cmd != "" {
			hint = "petstore " + u.cmd + " --help"
		}
		fmt.Fprintf(stderr, "petstore: %s\nRun `%s` for usage.\n", flagNames.Replace(err.Error()), hint)
		return 2
	}
	fmt.Fprintln(stderr, "petstore:", err)
	return 1
}

func printVersion(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version")
	if err := fs.Parse(args); err != nil {
		return badUsage("version", err)
	}
	if fs.NArg() > 0 {
		return usageError{cmd: "version", err: fmt.Errorf("version: unexpected argument %q", fs.Arg(0))}
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(releaseStamp(), info, ok))
	return nil
}

// What scripts/release stamps into a release binary with the linker
// (-ldflags "-X main.stampVersion=v1.2.3 ..."). The linker can set package-level
// strings only, hence these variables; nothing assigns them at run time. They are
// empty in any other build, where the go command's build information says what it knows.
var stampVersion, stampRevision, stampTime string

// buildStamp is what the release script said about a build: its version, the commit it
// was built from and that commit's time. A release builds from `git archive`, a tree
// without .git, so the go command records no VCS information of its own there.
type buildStamp struct{ version, revision, time string }

func releaseStamp() buildStamp { return buildStamp{stampVersion, stampRevision, stampTime} }

// versionLine says which build this is: "petstore v1.2.3 (rev abcdef1,
// 2026-11-20T10:00:00Z, modified)", from the release stamp where there is one, else from
// what the go command recorded in the binary (the module version for `go install
// …@version`, the VCS revision for a build in a clone), or "petstore (devel)" for a
// build without either (go run).
func versionLine(st buildStamp, info *debug.BuildInfo, ok bool) string {
	version := moduleVersion(info, ok)
	var rev, at string
	modified := false
	if ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if st.version != "" {
		version = st.version
	}
	if st.revision != "" {
		rev, at, modified = st.revision, st.time, false
	}
	var vcs []string
	if rev != "" {
		vcs = append(vcs, "rev "+rev[:min(7, len(rev))])
	}
	if at != "" {
		vcs = append(vcs, at)
	}
	if modified {
		vcs = append(vcs, "modified")
	}
	if len(vcs) == 0 {
		return "petstore " + version
	}
	return "petstore " + version + " (" + strings.Join(vcs, ", ") + ")"
}

// buildVersion is the version of this build (the traces' service.version): the
// release's stamp, else the module version the go command recorded, else "(devel)".
func buildVersion(st buildStamp) string {
	if st.version != "" {
		return st.version
	}
	info, ok := debug.ReadBuildInfo()
	return moduleVersion(info, ok)
}

// moduleVersion is the module version the go command recorded ("v1.2.3" for `go
// install …@v1.2.3`), or "(devel)".
func moduleVersion(info *debug.BuildInfo, ok bool) string {
	if ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
