// Package e2e holds the end-to-end tests of what a reader of the docs meets, run
// against the real petstore binary on a real port with the demo data:
//
//   - samples_test.go runs every x-codeSamples entry of the served document (cURL with
//     curl, JavaScript with node, Python with python3 and requests) and checks that
//     each reaches its operation and gets the documented success status;
//   - browser_test.go opens /docs in headless Chromium, checks the markers, the code
//     samples and try-it, and saves screenshots under e2e/test-output/;
//   - consumers_test.go is the consumer matrix: the walk-through through the Go SDK
//     (sdk/go), the TypeScript SDK (sdk/typescript, npm ci and npm test) and a client
//     oapi-codegen generates fresh from the served document, and each SDK's README
//     recipe for installing it from a checkout, run in a new project outside the
//     repository;
//   - console_test.go runs the staff console (/console) in headless Chromium as staff
//     would, checks it with axe-core (from console/, npm ci) and saves screenshots;
//   - shop_test.go runs the shop (/shop) as a customer on a phone with the keyboard:
//     sign-up, a pet found by its tag with its photo, an order, My orders, a cancel;
//   - webhooks_test.go runs the webhook receivers of the docs (Node.js, Python, Go)
//     against deliveries made by the service's sender (package webhook).
//
// They need curl, node (20 or later) with npm, python3 with requests and chromium; the script
// scripts/setup-browser-tests installs what is missing. They run only when PETSTORE_E2E=1
// (which CI sets): `go test ./...` on a fresh checkout skips the package with one message
// naming the variable, so that it needs nothing but Go and ends well within go test's
// default 10-minute timeout. With the variable set, a missing tool fails them.
package e2e
