// Package api holds the OpenAPI document of the Pet Store API, the single source of
// truth of the interface: the server and client in package oas are generated from it,
// and the service serves it (see Document).
package api

//go:generate go run ./internal/ogeninput openapi.yaml -- go tool ogen -config ogen.yml -target ../internal/oas -package oas -clean
//go:generate go run ./internal/ogendispatch ../internal/oas
//go:generate go tool oapi-codegen -config ../sdk/go/internal/api/oapi-codegen.yaml openapi.yaml
