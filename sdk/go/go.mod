module github.com/acme-pets/petstore/sdk/go

go 1.23

require (
	github.com/oapi-codegen/runtime v1.2.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.5.0 // indirect
)
