package api

import (
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Every operation of the document has its roles, and its prose agrees: the ones
// described "Admin only" are exactly those whose x-roles is [admin].
func TestEveryOperationNamesItsRoles(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	root, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	described := map[string]bool{}
	WalkOperations(root, func(_, _ string, op *yaml.Node) {
		described[Scalar(op, "operationId")] = strings.HasPrefix(Scalar(op, "description"), "Admin only")
	})
	admin, open := 0, 0
	for _, op := range ops {
		onlyAdmin := slices.Equal(op.Roles, []string{"admin"})
		if onlyAdmin != described[op.ID] {
			t.Errorf("%s: x-roles %v, but its description says admin only: %v", op.ID, op.Roles, described[op.ID])
		}
		if onlyAdmin {
			admin++
		}
		if op.Open {
			open++
		}
	}
	if admin != 28 || open != 6 || len(ops) != 50 {
		t.Errorf("%d operations, %d admin only, %d open; the contract has 50, 28 and 6", len(ops), admin, open)
	}
}

func TestAnOperationWithoutRolesIsAnError(t *testing.T) {
	tests := []struct{ name, op, want string }{
		{"no x-roles", "operationId: a\n      x-scopes: [pets:read]", "names no x-roles"},
		{"an unknown role", "operationId: a\n      x-roles: [root]\n      x-scopes: [pets:read]", `names "root"`},
		{"roles on an open operation", "operationId: a\n      security: []\n      x-roles: [admin]", "open to all"},
		{"no x-scopes", "operationId: a\n      x-roles: [admin]", "names no x-scopes"},
		{"an unknown scope", "operationId: a\n      x-roles: [admin]\n      x-scopes: [pets:eat]", `names "pets:eat"`},
		{"two scopes", "operationId: a\n      x-roles: [admin]\n      x-scopes: [pets:read, pets:write]", "exactly one scope"},
		{"a scope on an open operation", "operationId: a\n      security: []\n      x-scopes: [pets:read]", "open to all"},
		{"an own key not in the path", "operationId: a\n      x-roles: [admin]\n      x-scopes: [pets:read]\n      x-scopes-own-key: keyId", `not a parameter of its path`},
	}
	for _, tt := range tests {
		var root yaml.Node
		doc := "openapi: 3.0.3\npaths:\n  /a:\n    get:\n      " + tt.op + "\n" +
			"components:\n  securitySchemes:\n    bearerAuth:\n      x-scopes:\n        pets:read: r\n        pets:write: w\n"
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Fatal(err)
		}
		if _, err := operations(&root); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// Every scope of the catalogue serves some operation, and a customer can never hold
// a scope that only admins' operations need.
func TestEveryScopeServesAnOperation(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	list, err := Scopes()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, op := range ops {
		used[op.Scope] = true
	}
	for _, s := range list {
		if !used[s.Name] {
			t.Errorf("scope %s serves no operation", s.Name)
		}
		if s.Description == "" {
			t.Errorf("scope %s has no description", s.Name)
		}
	}
	allowed := RoleScopes(ops)
	if len(allowed["admin"]) != len(list) {
		t.Errorf("admins may hold %v, want every scope", allowed["admin"])
	}
	for _, s := range []string{"pets:write", "categories:write", "inventory:write", "webhooks:manage", "events:read"} {
		if slices.Contains(allowed["customer"], s) {
			t.Errorf("customers may hold %s", s)
		}
	}
	for _, s := range []string{"pets:read", "orders:write", "keys:manage"} {
		if !slices.Contains(allowed["customer"], s) {
			t.Errorf("customers may not hold %s", s)
		}
	}
}

// The operations that take an ids list are found through their $ref'd parameters.
func TestOperationsKnowWhichTakeAnIDList(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		if op.IDs {
			got = append(got, op.ID)
		}
	}
	slices.Sort(got)
	if want := []string{"listAccounts", "listInventory", "listPets"}; !slices.Equal(got, want) {
		t.Errorf("operations with ids: %v, want %v", got, want)
	}
}

// Only revokeApiKey is called by a key on itself without its scope, and the path
// parameter it names is the key's.
func TestOnlyRevokingAKeyItselfNeedsNoScope(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	var own []Operation
	for _, op := range ops {
		if op.OwnKeyParam != "" {
			own = append(own, op)
		}
	}
	if len(own) != 1 || own[0].ID != "revokeApiKey" || own[0].OwnKeyParam != "keyId" || own[0].OwnKeyArg != 0 {
		t.Errorf("operations a key calls on itself without their scope: %+v; want revokeApiKey by keyId", own)
	}
	if got := pathParams("/a/{x}/b/{keyId}"); !slices.Equal(got, []string{"x", "keyId"}) {
		t.Errorf("pathParams = %v", got)
	}
}
