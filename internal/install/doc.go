// Package install holds the tests of the ways to install petstore that the README's
// Install section gives: `go install …@latest` against a module proxy serving this
// commit, the archives of scripts/release, and the container image of scripts/image
// (Dockerfile). It has no code of its own; cmd/petstore tests the variables that
// Dockerfile and compose.yaml set against the flags of `petstore serve`.
package install
