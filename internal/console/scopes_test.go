package console

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/api"
	"gopkg.in/yaml.v3"
)

// The console calls the API through the TypeScript SDK: `client.pets.update(…)` in a
// view, `petstore.accounts.me()` at sign-in.
var (
	consoleCall = regexp.MustCompile(`\b(?:client|petstore)\.(\w+)\.(\w+)\(`)
	// A group of the SDK's client object (`    pets: {`) and a method in it
	// (`      update: (petId, body, o) => unwrap(raw.PATCH("/pets/{petId}", …`, the call
	// sometimes on the next line).
	sdkGroup       = regexp.MustCompile(`^ {4}(\w+): \{$`)
	sdkMethodStart = regexp.MustCompile(`^ {6}\w+: `)
	sdkMethod      = regexp.MustCompile(`(?s)^ {6}(\w+): .*?\braw\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)"`)
	// A call the test could not attribute: the SDK's raw client, or a path of the API.
	unseenCall = regexp.MustCompile(`\.raw\b|["'` + "`" + `]/v1/`)
	// The views of main.ts (`{ id: "stock", title: "Stock", reads: "listPets", render: stockView }`) and
	// where their functions come from (`import { stockView } from "./stock.js";`).
	consoleView   = regexp.MustCompile(`\{ id: "\w+", title: "([^"]+)", reads: "\w+", render: (\w+) \}`)
	consoleImport = regexp.MustCompile(`import \{ ([\w, ]+) \} from "\./(\w+)\.js";`)
	scopeName     = regexp.MustCompile("`([a-z]+:[a-z]+)`")
	// Where an exported function or class starts, and the Console's properties
	// (`  accounts: AccountNames;`).
	exported        = regexp.MustCompile(`(?m)^export (?:async )?(?:function|class) (\w+)`)
	consoleProperty = regexp.MustCompile(`(?m)^  (\w+): (\w+);`)
	readmeRow       = regexp.MustCompile(`^\|\s*([^|]+?)\s*\|([^|]*)\|([^|]*)\|$`)
)

type route struct{ method, path string }

// placed is a call and where it stands in its file.
type placed struct {
	call
	at int
}

type call struct {
	op     string // the operation's id
	scope  string // its x-scopes
	read   bool   // a GET
	public bool   // security: [] (signing in, a one-time link): no key, no scope
}

// signInFiles are the sources of the sign-in and sign-out (the row "Sign-in (every
// screen)"), not of a screen.
var signInFiles = map[string]bool{"main.ts": true, "signin.ts": true}

// TestTheDocsListTheScopesTheConsoleCalls holds docs/USING.md's list of the scopes a
// console key needs, and its table of what each screen needs, to the operations the
// console's sources call (through the SDK's methods, read from its client.ts) and to
// the document's x-scopes of those operations: the list is exactly their scopes; the
// table covers exactly the list, has a row per screen of the console, and each
// screen's row holds exactly the scopes of its calls, its own and its helpers' (a
// GET's among those to see it, unless the sign-in already needs it).
func TestTheDocsListTheScopesTheConsoleCalls(t *testing.T) {
	routes := sdkRoutes(t)
	ops := documentRoutes(t)
	calls := map[string][]call{}     // by source file
	callsAt := map[string][]placed{} // by source file, with where each call stands
	var all []string
	files, err := filepath.Glob("../../console/src/*.ts")
	if err != nil || len(files) == 0 {
		t.Fatalf("no console sources: %v", err)
	}
	sources := map[string]string{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(file)
		sources[name] = string(b)
		if m := unseenCall.FindString(string(b)); m != "" {
			t.Errorf("%s calls the API other than through the SDK's methods (%q): this test cannot tell its scope", name, m)
		}
		for _, m := range consoleCall.FindAllStringSubmatch(string(b), -1) {
			r, ok := routes[m[1]+"."+m[2]]
			if !ok {
				t.Errorf("%s calls %s.%s, which the SDK's client.ts does not define", name, m[1], m[2])
				continue
			}
			c, ok := ops[r]
			if !ok {
				t.Errorf("%s calls %s.%s (%s %s), which the document does not have", name, m[1], m[2], r.method, r.path)
				continue
			}
			if c.public {
				continue // no key, so no scope: signing in, a one-time link
			}
			if c.scope == "" {
				t.Errorf("%s calls %s, which has no x-scopes and is not public", name, c.op)
				continue
			}
			calls[name] = append(calls[name], c)
			callsAt[name] = append(callsAt[name], placed{c, strings.Index(string(b), m[0])})
			if !slices.Contains(all, c.scope) {
				all = append(all, c.scope)
			}
		}
	}
	if len(all) == 0 {
		t.Fatal("found no API call in the console's sources")
	}

	list, table := readmeConsoleScopes(t)
	slices.Sort(all)
	if got := slices.Sorted(slices.Values(list)); !slices.Equal(got, all) {
		t.Errorf("the docs say a console key needs %v; the console's calls need %v", got, all)
	}
	var covered []string
	for _, row := range table {
		for _, s := range append(slices.Clone(row.see), row.change...) {
			if !slices.Contains(covered, s) {
				covered = append(covered, s)
			}
		}
	}
	if got, want := slices.Sorted(slices.Values(covered)), slices.Sorted(slices.Values(list)); !slices.Equal(got, want) {
		t.Errorf("the docs' table of screens names %v, its list %v", got, want)
	}

	// Sign-in: the call main.ts makes to check the key.
	signIn, ok := table["Sign-in (every screen)"]
	if !ok {
		t.Fatal(`the docs' table has no row "Sign-in (every screen)"`)
	}
	me := ops[route{"get", "/accounts/me"}]
	if !slices.ContainsFunc(calls["main.ts"], func(c call) bool { return c.op == me.op }) {
		t.Errorf("main.ts does not call %s: the sign-in the docs describe", me.op)
	}
	// Signing out revokes a session's key: the sign-in's changes are those of its
	// files' other calls.
	var signOut []string
	for file := range signInFiles {
		for _, c := range calls[file] {
			if !c.read {
				signOut = appendNew(signOut, c.scope)
			}
		}
	}
	slices.Sort(signOut)
	if !slices.Equal(signIn.see, []string{me.scope}) || !slices.Equal(slices.Sorted(slices.Values(signIn.change)), signOut) {
		t.Errorf("the docs' sign-in row is %+v, want %s to see it and %v to change things", signIn, me.scope, signOut)
	}

	// Each view: its row, holding exactly the scopes of its calls: those of its own
	// file, and those of the helpers it uses (an exported function it calls, or a
	// class it reaches as a property of the Console).
	fileOf := map[string]string{} // render function → file
	for _, m := range consoleImport.FindAllStringSubmatch(sources["main.ts"], -1) {
		for _, fn := range strings.Split(m[1], ", ") {
			fileOf[fn] = m[2] + ".ts"
		}
	}
	viewFiles := maps.Clone(signInFiles)
	for _, v := range consoleView.FindAllStringSubmatch(sources["main.ts"], -1) {
		viewFiles[fileOf[v[2]]] = true
	}
	// Helpers: the exported functions and classes of the other files, with their calls;
	// and the Console's properties, by the class they hold.
	helpers := map[string][]call{}
	for file, placedCalls := range callsAt {
		if viewFiles[file] {
			continue
		}
		starts := exported.FindAllStringSubmatchIndex(sources[file], -1)
		for _, pc := range placedCalls {
			name := ""
			for _, st := range starts {
				if st[0] <= pc.at {
					name = sources[file][st[2]:st[3]]
				}
			}
			if name == "" {
				t.Errorf("%s calls %s outside an exported function or class: this test cannot tell which screen it serves", file, pc.op)
				continue
			}
			helpers[name] = append(helpers[name], pc.call)
		}
	}
	for _, m := range consoleProperty.FindAllStringSubmatch(sources["context.ts"], -1) {
		if _, ok := helpers[m[2]]; ok {
			helpers["ctx."+m[1]+"."] = helpers[m[2]]
			delete(helpers, m[2])
		}
	}
	used := map[string]bool{}
	views := consoleView.FindAllStringSubmatch(sources["main.ts"], -1)
	if len(views) == 0 {
		t.Fatal("found no views in main.ts")
	}
	screens := []string{"Sign-in (every screen)"}
	for _, v := range views {
		title, file := v[1], fileOf[v[2]]
		screens = append(screens, title)
		row, ok := table[title]
		if !ok {
			t.Errorf("the docs' table has no row for the screen %s", title)
			continue
		}
		if _, ok := sources[file]; !ok {
			t.Errorf("the screen %s: no source %q for %s", title, file, v[2])
			continue
		}
		var see, change []string
		for _, c := range append(slices.Clone(calls[file]), helperCalls(sources[file], helpers, used)...) {
			if c.read {
				if slices.Contains(signIn.see, c.scope) {
					continue // every screen has it: the sign-in needs it
				}
				see = appendNew(see, c.scope)
			} else {
				change = appendNew(change, c.scope)
			}
		}
		slices.Sort(see)
		slices.Sort(change)
		if !slices.Equal(see, slices.Sorted(slices.Values(row.see))) || !slices.Equal(change, slices.Sorted(slices.Values(row.change))) {
			t.Errorf("the screen %s (%s and its helpers) needs %v to see it and %v to change things; the docs' row gives %v and %v",
				title, file, see, change, row.see, row.change)
		}
	}
	for name := range helpers {
		if !used[name] {
			t.Errorf("the helper %s calls the API, but no screen is found using it: this test cannot tell which row its scopes belong to", name)
		}
	}
	if got, want := slices.Sorted(maps.Keys(table)), slices.Sorted(slices.Values(screens)); !slices.Equal(got, want) {
		t.Errorf("the docs' table has the screens %v; the console has %v", got, want)
	}
}

// sdkRoutes reads the route of each method of the TypeScript SDK's client ("pets.update").
func sdkRoutes(t *testing.T) map[string]route {
	t.Helper()
	b, err := os.ReadFile("../../sdk/typescript/src/client.ts")
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]route{}
	lines := strings.Split(string(b), "\n")
	group := ""
	for i, line := range lines {
		if m := sdkGroup.FindStringSubmatch(line); m != nil {
			group = m[1]
			continue
		}
		if group == "" {
			continue
		}
		// The method and the lines that continue it, up to the next method or the
		// group's end.
		text := line
		for _, next := range lines[i+1:] {
			if sdkMethodStart.MatchString(next) || strings.HasPrefix(next, "    }") {
				break
			}
			text += "\n" + next
		}
		if m := sdkMethod.FindStringSubmatch(text); m != nil {
			routes[group+"."+m[1]] = route{strings.ToLower(m[2]), m[3]}
		}
	}
	if len(routes) < 10 {
		t.Fatalf("read only %d methods from the SDK's client.ts: %v", len(routes), routes)
	}
	return routes
}

// documentRoutes reads each operation of the document by its method and path.
func documentRoutes(t *testing.T) map[route]call {
	t.Helper()
	root, err := api.ParseTree(api.Source)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[route]call{}
	api.WalkOperations(root, func(path, method string, op *yaml.Node) {
		c := call{op: api.Scalar(op, "operationId"), read: method == "get"}
		if s := api.Value(op, "security"); s != nil && len(s.Content) == 0 {
			c.public = true
		}
		if s := api.Value(op, "x-scopes"); s != nil && len(s.Content) == 1 {
			c.scope = s.Content[0].Value
		}
		ops[route{method, path}] = c
	})
	return ops
}

type screenScopes struct{ see, change []string }

// readmeConsoleScopes reads the console section of docs/USING.md: the list of scopes a console
// key needs, and the table of what each screen needs, by screen.
func readmeConsoleScopes(t *testing.T) ([]string, map[string]screenScopes) {
	t.Helper()
	b, err := os.ReadFile("../../docs/USING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The staff console\n")
	if !ok {
		t.Fatal("docs/USING.md has no section The staff console")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, text, ok := strings.Cut(section, "**The console's scopes.**")
	if !ok {
		t.Fatal("the docs' console section has no paragraph The console's scopes")
	}
	text, rest, ok := strings.Cut(text, "Each screen needs:")
	if !ok {
		t.Fatal(`the docs' paragraph on the console's scopes does not end with "Each screen needs:"`)
	}
	var list []string
	for _, m := range scopeName.FindAllStringSubmatch(text, -1) {
		if slices.Contains(list, m[1]) {
			t.Errorf("the docs name %s twice among the console's scopes", m[1])
		}
		list = append(list, m[1])
	}
	table := map[string]screenScopes{}
	for _, line := range strings.Split(strings.TrimSpace(rest), "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := readmeRow.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("the docs' table of screens has a row this test cannot read: %s", line)
		}
		if m[1] == "Screen" || strings.HasPrefix(m[1], "---") {
			continue
		}
		var row screenScopes
		for _, s := range scopeName.FindAllStringSubmatch(m[2], -1) {
			row.see = append(row.see, s[1])
		}
		for _, s := range scopeName.FindAllStringSubmatch(m[3], -1) {
			row.change = append(row.change, s[1])
		}
		table[m[1]] = row
	}
	if len(list) == 0 || len(table) == 0 {
		t.Fatalf("read %d scopes and %d screens from the docs' console section", len(list), len(table))
	}
	return list, table
}

// helperCalls are the calls of the helpers source uses: an exported function it calls
// (`petsById(`), or a Console property holding a helper class (`ctx.accounts.`). It
// marks them used.
func helperCalls(source string, helpers map[string][]call, used map[string]bool) []call {
	var out []call
	for name, calls := range helpers {
		ref := name + "("
		if strings.HasPrefix(name, "ctx.") {
			ref = name
		}
		if strings.Contains(source, ref) {
			used[name] = true
			out = append(out, calls...)
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
