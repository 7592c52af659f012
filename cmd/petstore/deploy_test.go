package main

import (
	"flag"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The files that run petstore elsewhere (compose.yaml, Dockerfile) name its settings by
// their variables. These tests hold those names to the flags of `petstore serve`: a
// renamed flag, or a misspelt variable, which petstore would silently ignore, fails here.

// composeVar is an interpolation of compose.yaml: ${NAME}, ${NAME:-default}, ${NAME:?error}.
var composeVar = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(?::?[-?][^}]*)?\}`)

// knownVariable says whether name is a variable that `petstore serve` reads.
func knownVariable(name string) bool {
	known := false
	serveFlags(new(serveConfig)).VisitAll(func(f *flag.Flag) {
		if envName(f.Name) == name || envAliases[envName(f.Name)] == name {
			known = true
		}
	})
	return known
}

// checkServeEnv fails the test for a PETSTORE_ variable that serve does not read, and
// returns the configuration that env gives serve.
func checkServeEnv(t *testing.T, where string, env map[string]string) serveConfig {
	t.Helper()
	for name := range env {
		if strings.HasPrefix(name, "PETSTORE_") && !knownVariable(name) {
			t.Errorf("%s sets %s, which is no variable of petstore serve", where, name)
		}
	}
	c, err := parseServeConfig(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%s: petstore serve refuses its environment: %v", where, err)
	}
	return c
}

func TestComposeRunsTwoInstancesOnOneDatabase(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// What compose would substitute: any value will do but the same one each time.
	text := composeVar.ReplaceAllStringFunc(string(raw), func(m string) string {
		return "value-of-" + composeVar.FindStringSubmatch(m)[1]
	})
	var file struct {
		Services map[string]struct {
			Image       string
			Environment map[string]string
			Ports       []string
			DependsOn   map[string]any `yaml:"depends_on"`
		}
	}
	if err := yaml.Unmarshal([]byte(text), &file); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var names []string
	for name := range file.Services {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"petstore-1", "petstore-2", "postgres", "redis"}; !slices.Equal(names, want) {
		t.Fatalf("compose.yaml runs %v, want %v", names, want)
	}

	db := file.Services["postgres"].Environment
	var database, redis string
	var ports []string
	for _, name := range []string{"petstore-1", "petstore-2"} {
		s := file.Services[name]
		c := checkServeEnv(t, "compose.yaml's "+name, s.Environment)
		if database == "" {
			database, redis = c.database, c.redis
		} else if c.database != database || c.redis != redis {
			t.Errorf("%s uses database %q and Redis %q, the other instance %q and %q", name, c.database, c.redis, database, redis)
		}
		for _, dep := range []string{"postgres", "redis"} {
			if _, ok := s.DependsOn[dep]; !ok {
				t.Errorf("%s does not wait for %s", name, dep)
			}
		}
		if s.Image != "value-of-PETSTORE_IMAGE" {
			t.Errorf("%s runs image %q, want the one PETSTORE_IMAGE names", name, s.Image)
		}
		if s.Environment["PGPASSWORD"] != db["POSTGRES_PASSWORD"] {
			t.Errorf("%s's PGPASSWORD is %q, the database's password %q", name, s.Environment["PGPASSWORD"], db["POSTGRES_PASSWORD"])
		}
		if len(s.Ports) != 1 || !strings.HasSuffix(s.Ports[0], ":8080") {
			t.Errorf("%s publishes %v, want one port mapped to the image's 8080", name, s.Ports)
		}
		ports = append(ports, s.Ports...)
	}
	if len(ports) == 2 && ports[0] == ports[1] {
		t.Errorf("both instances publish %s", ports[0])
	}

	u, err := url.Parse(database)
	if err != nil || u.Scheme != "postgres" || u.Hostname() != "postgres" {
		t.Fatalf("the instances' database is %q, want a postgres:// URL of the postgres service", database)
	}
	if u.User.Username() != db["POSTGRES_USER"] || u.Path != "/"+db["POSTGRES_DB"] {
		t.Errorf("the instances connect as %q to %q, the postgres service makes user %q and database %q",
			u.User.Username(), u.Path, db["POSTGRES_USER"], db["POSTGRES_DB"])
	}
	if _, pw := u.User.Password(); pw {
		t.Errorf("the database URL holds a password; PGPASSWORD carries it (docs/OPERATING.md, Passwords in URLs)")
	}
	if r, err := url.Parse(redis); err != nil || r.Scheme != "redis" || r.Hostname() != "redis" {
		t.Errorf("the instances' Redis is %q, want a redis:// URL of the redis service", redis)
	}
}

// Dockerfile's settings: every PETSTORE_ variable one of serve's, the API on every
// interface at the port it exposes, the database on the volume, a user without
// privileges.
func TestTheDockerfileSetsVariablesOfServe(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Continuation lines joined, comments dropped: one instruction a line.
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(string(raw), "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	env := map[string]string{}
	instr := map[string]string{}
	for _, l := range lines {
		op, rest, _ := strings.Cut(l, " ")
		instr[op] = strings.TrimSpace(rest)
		if op == "ENV" {
			for _, kv := range strings.Fields(rest) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("Dockerfile: ENV %q is not NAME=value", kv)
				}
				env[k] = v
			}
		}
	}
	c := checkServeEnv(t, "Dockerfile", env)
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil || (host != "" && host != "0.0.0.0") {
		t.Errorf("the image listens on %q, want every interface", c.addr)
	}
	if instr["EXPOSE"] != port {
		t.Errorf("the image exposes %q and listens on port %q", instr["EXPOSE"], port)
	}
	if volume := instr["VOLUME"]; volume == "" || !strings.HasPrefix(c.database, volume+"/") {
		t.Errorf("the database %q is not on the volume %q", c.database, volume)
	}
	if instr["USER"] != "65532:65532" {
		t.Errorf("the image runs as %q, want 65532:65532 (no privileges, no name needed)", instr["USER"])
	}
	if instr["FROM"] != "scratch" {
		t.Errorf("the image is built FROM %q; scratch needs nothing pulled", instr["FROM"])
	}
}
