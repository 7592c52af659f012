package petstore_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// The API document is the source of truth: these tests read its operations, so that an
// operation added there fails here until the SDK has a method for it, and until the
// tests against the real service call that method (TestEveryOperationAgainstTheService).

// operation is one operation of the API document.
type operation struct {
	ID     string         // its operationId
	Method string         // GET, POST…
	Path   string         // its path template, such as /pets/{petId}
	Scope  string         // the scope a key needs for it (x-scopes); "" when it needs no key
	path   *regexp.Regexp // the request paths it answers, /v1 included
}

// documentOperations reads every operation of ../../api/openapi.yaml, by path.
func documentOperations(t *testing.T) []operation {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	var ops []operation
	for path, item := range doc.Paths {
		for method, node := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			default:
				continue // parameters, summary…
			}
			var op struct {
				OperationID string   `yaml:"operationId"`
				Scopes      []string `yaml:"x-scopes"`
			}
			if err := node.Decode(&op); err != nil || op.OperationID == "" {
				t.Fatalf("%s %s: no operationId (%v)", method, path, err)
			}
			if len(op.Scopes) > 1 {
				t.Fatalf("%s needs %d scopes: the README's table has room for one", op.OperationID, len(op.Scopes))
			}
			segments := strings.Split(path, "/")
			for i, s := range segments {
				if strings.HasPrefix(s, "{") {
					segments[i] = `[^/]+` // a parameter
				} else {
					segments[i] = regexp.QuoteMeta(s)
				}
			}
			ops = append(ops, operation{
				ID: op.OperationID, Method: strings.ToUpper(method), Path: path, Scope: strings.Join(op.Scopes, ""),
				path: regexp.MustCompile("^/v1" + strings.Join(segments, "/") + "$"),
			})
		}
	}
	if len(ops) == 0 {
		t.Fatal("api/openapi.yaml has no operations")
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
	return ops
}

// answers reports whether a request with method and path is one of op.
func (op operation) answers(method, path string) bool {
	return method == op.Method && op.path.MatchString(path)
}

// methodNames are the Client methods whose names are not their operationId with a
// capital first letter.
var methodNames = map[string]string{
	"getPetById":   "GetPet", // the deprecated operation; ListPets with IDs replaces it
	"createApiKey": "CreateAPIKey",
	"listApiKeys":  "ListAPIKeys",
	"revokeApiKey": "RevokeAPIKey",
}

// methodName is the name of the Client method that makes the operation id.
func methodName(id string) string {
	if name, ok := methodNames[id]; ok {
		return name
	}
	return strings.ToUpper(id[:1]) + id[1:]
}

// notOperations are the Client methods that make no call themselves.
var notOperations = map[string]bool{"WithPassword": true, "PhotoURL": true}

// helpers are the Client methods that make another method's operation in an easier
// way, by the name of that method.
var helpers = map[string]string{"UploadPetPhotoFile": "UploadPetPhoto"}

func TestEveryOperationHasAMethod(t *testing.T) {
	client := reflect.TypeFor[*petstore.Client]()
	made := map[string]bool{}
	for _, op := range documentOperations(t) {
		name := methodName(op.ID)
		made[name] = true
		if _, ok := client.MethodByName(name); !ok {
			t.Errorf("operation %s (%s %s) has no method: add Client.%s", op.ID, op.Method, op.Path, name)
		}
	}
	// And the other way: a method whose operation left the document calls nothing.
	// A list's page-at-a-time form makes the list's operation.
	for i := range client.NumMethod() {
		name := client.Method(i).Name
		if list, ok := strings.CutSuffix(name, "Pages"); ok && made[list] {
			continue
		}
		if made[helpers[name]] {
			continue
		}
		if !made[name] && !notOperations[name] {
			t.Errorf("Client.%s makes no operation of the document", name)
		}
	}
	// Every list has its page-at-a-time form.
	for name := range made {
		if strings.HasPrefix(name, "List") {
			if _, ok := client.MethodByName(name + "Pages"); !ok {
				t.Errorf("the list Client.%s has no Client.%sPages", name, name)
			}
		}
	}
	for id := range methodNames {
		if !made[methodNames[id]] {
			t.Errorf("methodNames names %s, which the document does not have", id)
		}
	}
}

// callWithPlaceholders calls the method name of receiver with a background context and
// placeholder arguments (1 for an id, "x" for a string id, the zero value of anything
// else), runs a list to its end, and returns the error.
func callWithPlaceholders(receiver any, name string) error {
	m := reflect.ValueOf(receiver).MethodByName(name)
	if !m.IsValid() {
		return errors.New("no method " + name)
	}
	args := []reflect.Value{reflect.ValueOf(context.Background())}
	in := m.Type().NumIn()
	if m.Type().IsVariadic() {
		in-- // the call options: none
	}
	for i := 1; i < in; i++ {
		arg := reflect.New(m.Type().In(i)).Elem()
		switch arg.Kind() {
		case reflect.Int64:
			arg.SetInt(1)
		case reflect.String:
			arg.SetString("x")
		}
		args = append(args, arg)
	}
	out := m.Call(args)
	last := out[len(out)-1]
	if last.Kind() != reflect.Func { // (T, error) or error
		err, _ := last.Interface().(error)
		return err
	}
	// An iter.Seq2[T, error] (T an item or a *Page): range over it with a yield made
	// to its type.
	var err error
	yield := reflect.MakeFunc(last.Type().In(0), func(in []reflect.Value) []reflect.Value {
		if e, ok := in[1].Interface().(error); ok && e != nil && err == nil {
			err = e
		}
		return []reflect.Value{reflect.ValueOf(true)}
	})
	last.Call([]reflect.Value{yield})
	return err
}

// Every operation of the document, against a service that refuses everything: none may
// pass an error for a result, each sends its own method and path, and each reports its
// own operationId (here, through the deprecation report).
func TestEveryOperationReturnsTheErrorOfADeclaredAnswer(t *testing.T) {
	ops := documentOperations(t)
	for _, status := range []int{400, 401, 403, 404, 409, 410, 413, 422, 500} {
		var sent, reported string
		c := fake(t, func(w http.ResponseWriter, r *http.Request) {
			sent = r.Method + " " + r.URL.Path
			w.Header().Set("Deprecation", "@1793491200") // so that every answer names its operation
			answer(w, status, `{"code":"some_code","message":"No.","status":0}`)
		}, petstore.WithRetries(0), petstore.WithDeprecationHandler(func(d petstore.Deprecation) { reported = d.Operation }))

		for _, op := range ops {
			names := []string{methodName(op.ID)}
			if _, ok := reflect.TypeOf(c).MethodByName(names[0] + "Pages"); ok {
				names = append(names, names[0]+"Pages")
			}
			for _, name := range names {
				sent, reported = "", ""
				err := callWithPlaceholders(c, name)
				var apiErr *petstore.Error
				if !errors.As(err, &apiErr) || apiErr.Status != status {
					t.Errorf("%s, answered %d: err = %v, want a *petstore.Error with status %d", name, status, err, status)
				}
				if method, path, _ := strings.Cut(sent, " "); !op.answers(method, path) {
					t.Errorf("%s sent %q, want %s /v1%s", name, sent, op.Method, op.Path)
				}
				if reported != op.ID {
					t.Errorf("%s reported its answer as %q's", name, reported)
				}
			}
		}

		// The key calls with a password instead of a key, too.
		keys := c.WithPassword("a@example.com", "pw")
		for i := range reflect.TypeOf(keys).NumMethod() {
			name := reflect.TypeOf(keys).Method(i).Name
			var apiErr *petstore.Error
			if err := callWithPlaceholders(keys, name); !errors.As(err, &apiErr) || apiErr.Status != status {
				t.Errorf("PasswordClient.%s, answered %d: err = %v, want a *petstore.Error with status %d", name, status, err, status)
			}
		}
	}
}

// The README's table of operations names every method with its operation and the
// scope it needs.
func TestTheREADMEListsEveryOperation(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range documentOperations(t) {
		scope := "none"
		if op.Scope != "" {
			scope = "`" + op.Scope + "`"
		}
		row := regexp.MustCompile("(?m)^\\| `" + methodName(op.ID) + "`.*\\| `" + regexp.QuoteMeta(op.Method+" "+op.Path) + "` \\|.*\\| " +
			regexp.QuoteMeta(scope) + " \\|$")
		if !row.Match(readme) {
			t.Errorf("README.md has no row for %s: | `%s` | `%s %s` | … | %s |", op.ID, methodName(op.ID), op.Method, op.Path, scope)
		}
	}
}
