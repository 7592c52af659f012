// Package api holds the OpenAPI document of the Pet Store API, the single source of
// truth of the interface: the server and client in package oas are generated from it,
// and the service serves it (see Document).
package api

//go:generate go tool ogen -config ogen.yml -target ../oas -package oas -clean openapi.yaml
