package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/servetest"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// runExit runs the command line as main does and returns its exit code and streams.
func runExit(t *testing.T, getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = exit(run(context.Background(), args, getenv, &out, &errs), &errs)
	return code, out.String(), errs.String()
}

func TestHelpIsPrintedOnStdoutAndExitsZero(t *testing.T) {
	commandList := func(t *testing.T, out string) {
		for _, want := range []string{"petstore [serve] [flags]", "petstore migrate", "petstore keys create", "petstore backup --to FILE", "petstore restore --from FILE", "petstore version", "petstore help", "PETSTORE_"} {
			if !strings.Contains(out, want) {
				t.Errorf("the list of commands lacks %q:\n%s", want, out)
			}
		}
	}
	flagsOf := func(fs *flag.FlagSet) func(t *testing.T, out string) {
		return func(t *testing.T, out string) {
			fs.VisitAll(func(f *flag.Flag) {
				line := lineOf(out, "  --"+f.Name+" ")
				if line == "" {
					t.Errorf("--%s is not in the help:\n%s", f.Name, out)
					return
				}
				if !strings.Contains(line, envName(f.Name)) {
					t.Errorf("--%s: the help does not name %s: %q", f.Name, envName(f.Name), line)
				}
				if f.DefValue != "" && f.DefValue != "false" && !strings.Contains(line, "default "+f.DefValue) {
					t.Errorf("--%s: the help does not give the default %s: %q", f.Name, f.DefValue, line)
				}
			})
		}
	}
	serveHelp := flagsOf(serveFlags(new(serveConfig)))
	keysHelp := flagsOf(keyFlags(new(keyOptions)))
	migrateHelp := flagsOf(migrateFlags(new(string)))
	tests := []struct {
		args  []string
		check func(t *testing.T, out string)
	}{
		{[]string{"--help"}, commandList},
		{[]string{"-h"}, commandList},
		{[]string{"-help"}, commandList},
		{[]string{"help"}, commandList},
		{[]string{"help", "serve"}, serveHelp},
		{[]string{"serve", "--help"}, serveHelp},
		{[]string{"serve", "-h"}, serveHelp},
		{[]string{"--demo", "--help"}, serveHelp}, // a bare petstore is serve
		{[]string{"migrate", "--help"}, migrateHelp},
		{[]string{"help", "migrate"}, migrateHelp},
		{[]string{"keys", "--help"}, keysHelp},
		{[]string{"keys", "create", "--help"}, keysHelp},
		{[]string{"keys", "create", "--email", "a@example.com", "-h"}, keysHelp},
		{[]string{"help", "keys"}, keysHelp},
		{[]string{"help", "keys", "create"}, keysHelp},
		{[]string{"version", "--help"}, func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "Usage: petstore version\n") {
				t.Errorf("version's help is %q", out)
			}
		}},
	}
	// The environment is broken on purpose: help must not depend on it.
	broken := func(k string) string {
		return map[string]string{"PETSTORE_RATE_LIMIT": "lots", "PETSTORE_DEMO": "maybe"}[k]
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runExit(t, broken, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			tt.check(t, stdout)
		})
	}
}

// lineOf returns the first line of text that starts with prefix, or "".
func lineOf(text, prefix string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

func TestACommandLineItCannotFollowExitsTwoWithAHint(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		hint string // the help the message points at
		says string
	}{
		{args: []string{"frobnicate"}, hint: "petstore --help", says: `unknown command "frobnicate"`},
		{args: []string{"help", "frobnicate"}, hint: "petstore --help", says: `unknown command "frobnicate"`},
		{args: []string{"--frobnicate"}, hint: "petstore serve --help", says: "not defined: --frobnicate"},
		{args: []string{"serve", "--rate-limit", "lots"}, hint: "petstore serve --help", says: "for flag --rate-limit"},
		{args: []string{"serve", "--rate-limit", "-1"}, hint: "petstore serve --help", says: "--rate-limit -1"},
		{args: []string{"serve", "--webhook-workers", "0"}, hint: "petstore serve --help", says: "--webhook-workers 0: want 1 to 25600"},
		{args: []string{"serve", "--log-format", "xml"}, hint: "petstore serve --help", says: "--log-format"},
		{args: []string{"serve", "--addr"}, hint: "petstore serve --help", says: "needs an argument: --addr"},
		{args: []string{"serve", "elsewhere"}, hint: "petstore serve --help", says: `unexpected argument "elsewhere"`},
		{args: []string{"serve"}, env: map[string]string{"PETSTORE_RATE_LIMIT": "lots"}, hint: "petstore serve --help", says: "PETSTORE_RATE_LIMIT"},
		{args: []string{"migrate", "--nope"}, hint: "petstore migrate --help", says: "--nope"},
		{args: []string{"keys"}, hint: "petstore keys --help", says: "keys create"},
		{args: []string{"keys", "delete"}, hint: "petstore keys --help", says: "keys create"},
		{args: []string{"keys", "create"}, hint: "petstore keys create --help", says: "--email"},
		{args: []string{"keys", "create", "--email", "a@example.com", "--role", "owner"}, hint: "petstore keys create --help", says: "--role"},
		{args: []string{"version", "extra"}, hint: "petstore version --help", says: `unexpected argument "extra"`},
		{args: []string{"backup"}, hint: "petstore backup --help", says: "--to FILE is required"},
		{args: []string{"restore", "--to", "x"}, hint: "petstore restore --help", says: "not defined: --to"},
		{args: []string{"restore"}, hint: "petstore restore --help", says: "--from FILE is required"},
		{args: []string{"serve", "--backup-every", "500ms"}, hint: "petstore serve --help", says: "--backup-every 500ms: want 1s or more"},
		{args: []string{"serve", "--backup-keep", "0"}, hint: "petstore serve --help", says: "--backup-keep 0"},
		{args: []string{"serve", "--backup-dir", "b", "--database", "postgres://db/shop"}, hint: "petstore serve --help", says: "pg_dump"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runExit(t, func(k string) string { return tt.env[k] }, tt.args...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if !strings.Contains(stderr, tt.says) || !strings.Contains(stderr, "Run `"+tt.hint+"` for usage.") {
				t.Errorf("stderr is %q; want it to say %q and point at %q", stderr, tt.says, tt.hint)
			}
			if n := strings.Count(stderr, "\n"); n > 2 {
				t.Errorf("the hint is %d lines, want a short one:\n%s", n, stderr)
			}
		})
	}
}

func TestAFailureOtherThanTheCommandLineExitsOne(t *testing.T) {
	db := filepath.Join(t.TempDir(), "missing", "petstore.db")
	code, _, stderr := runExit(t, noEnv, "migrate", "--database", db)
	if code != 1 || !strings.HasPrefix(stderr, "petstore: ") || strings.Contains(stderr, "--help") {
		t.Errorf("migrate into a missing folder: exit %d, stderr %q; want 1 and the error alone", code, stderr)
	}
}

func TestVersionSaysWhichBuildThisIs(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	release := buildStamp{"v1.2.4", "0123456789abcdef", "2026-11-27T10:00:00Z"}
	tests := []struct {
		name  string
		stamp buildStamp
		info  *debug.BuildInfo
		ok    bool
		want  string
	}{
		{"a release from a modified tree", buildStamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: settings(
			"vcs", "git", "vcs.revision", "abcdef1234567890", "vcs.time", "2026-11-20T10:00:00Z", "vcs.modified", "true")},
			true, "petstore v1.2.3 (rev abcdef1, 2026-11-20T10:00:00Z, modified)"},
		{"a clean tree", buildStamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: settings(
			"vcs.revision", "abcdef1234567890", "vcs.time", "2026-11-20T10:00:00Z", "vcs.modified", "false")},
			true, "petstore v1.2.3 (rev abcdef1, 2026-11-20T10:00:00Z)"},
		{"go run, without VCS information", buildStamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "petstore (devel)"},
		{"no version recorded", buildStamp{}, &debug.BuildInfo{}, true, "petstore (devel)"},
		{"no build information", buildStamp{}, nil, false, "petstore (devel)"},
		{"a release, built from git archive", release, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true,
			"petstore v1.2.4 (rev 0123456, 2026-11-27T10:00:00Z)"},
		{"a release stamp wins over what the go command saw", release, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}, Settings: settings(
			"vcs.revision", "abcdef1234567890", "vcs.time", "2026-11-20T10:00:00Z", "vcs.modified", "true")},
			true, "petstore v1.2.4 (rev 0123456, 2026-11-27T10:00:00Z)"},
		{"go install of a module version", buildStamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127100000-0123456789ab"}}, true,
			"petstore v0.0.0-20261127100000-0123456789ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionLine(tt.stamp, tt.info, tt.ok); got != tt.want {
				t.Errorf("versionLine = %q, want %q", got, tt.want)
			}
		})
	}
	info, ok := debug.ReadBuildInfo()
	want := versionLine(releaseStamp(), info, ok) + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, stdout, stderr := runExit(t, noEnv, args...)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("petstore %s: exit %d, stdout %q, stderr %q; want 0 and %q", args[0], code, stdout, stderr, want)
		}
	}
}

// The binary as built: its exit codes come from main, and `version` names the
// commit it was built from when the go command could see it (a clone's .git
// folder; it does not look into a git worktree's .git file).
func TestTheBuiltBinaryExitsAsDocumentedAndNamesItsRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var head string
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
		if out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
			head = strings.TrimSpace(string(out))
		}
	}
	bin := filepath.Join(t.TempDir(), "petstore")
	flags := []string{"-buildvcs=false"}
	if head != "" {
		flags = []string{"-buildvcs=true"}
	}
	if err := servetest.Build(context.Background(), bin, flags...); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "petstore ") {
		t.Fatalf("petstore version: %q, %v", out, err)
	}
	if head == "" {
		t.Logf("not in a git clone: the revision is not checked (%s)", strings.TrimSpace(string(out)))
	} else if !strings.Contains(string(out), "(rev "+head[:7]+", ") {
		t.Errorf("petstore version = %q, want it to name rev %s", out, head[:7])
	}
	for _, tt := range []struct {
		args []string
		code int
	}{{[]string{"--help"}, 0}, {[]string{"keys", "--help"}, 0}, {[]string{"frobnicate"}, 2}, {[]string{"serve", "--frobnicate"}, 2}} {
		err := exec.Command(bin, tt.args...).Run()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("petstore %s exits %d, want %d", strings.Join(tt.args, " "), code, tt.code)
		}
	}
}

// Every failure says "petstore:" once, at the start: the domain's errors, wrapped in
// the flag they are about, do not bring a second one.
func TestACLIErrorSaysPetstoreOnce(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAccount(context.Background(), "signup@example.com", "not-a-real-hash", petstore.Customer); err != nil {
		t.Fatal(err)
	}
	st.Close()
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"an email that is refused", []string{"keys", "create", "--database", db, "--email", "ops\u202e@example.com"}, 2, "petstore: --email: validation_failed: "},
		{"a key name that is refused", []string{"keys", "create", "--database", db, "--email", "ops@example.com", "--name", "a\x01b"}, 2, "petstore: --name: validation_failed: "},
		{"a sign-up made admin", []string{"keys", "create", "--database", db, "--email", "signup@example.com", "--role", "admin"}, 1, "petstore: "},
		{"a flag value that is not a number", []string{"serve", "--rate-limit", "x"}, 2, `petstore: invalid value "x" for flag --rate-limit`},
		{"a database that cannot be reached", []string{"migrate", "--database", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"}, 1, "petstore: migrate: "},
		{"a database file that cannot be made", []string{"migrate", "--database", filepath.Join(dir, "missing", "p.db")}, 1, "petstore: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runExit(t, noEnv, tt.args...)
			if code != tt.code || !strings.HasPrefix(stderr, tt.says) || strings.Count(stderr, "petstore:") != 1 {
				t.Errorf("%q: exit %d, stderr %q; want %d, starting %q, with petstore: once", tt.args, code, stderr, tt.code, tt.says)
			}
		})
	}
}

// A release's traces name its version: the stamp, which a release build has and the
// go command's build information does not (it builds from `git archive`).
func TestBuildVersionIsTheReleaseStampFirst(t *testing.T) {
	if got := buildVersion(buildStamp{version: "v1.2.3", revision: "abcdef1"}); got != "v1.2.3" {
		t.Errorf("with a stamp: %q, want v1.2.3", got)
	}
	info, ok := debug.ReadBuildInfo()
	if got, want := buildVersion(buildStamp{}), moduleVersion(info, ok); got != want || got == "" {
		t.Errorf("without a stamp: %q, want the module's %q", got, want)
	}
}
