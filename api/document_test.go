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
	if admin != 20 || open != 1 || len(ops) != 37 {
		t.Errorf("%d operations, %d admin only, %d open; the contract has 37, 20 and 1", len(ops), admin, open)
	}
}

func TestAnOperationWithoutRolesIsAnError(t *testing.T) {
	tests := []struct{ name, op, want string }{
		{"no x-roles", "operationId: a", "names no x-roles"},
		{"an unknown role", "operationId: a\n      x-roles: [root]", `names "root"`},
		{"roles on an open operation", "operationId: a\n      security: []\n      x-roles: [admin]", "open to all"},
	}
	for _, tt := range tests {
		var root yaml.Node
		doc := "openapi: 3.0.3\npaths:\n  /a:\n    get:\n      " + tt.op + "\n"
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Fatal(err)
		}
		if _, err := operations(&root); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}
