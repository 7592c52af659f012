// Package e2e holds the end-to-end tests of what a reader of the docs meets, run
// against the real petstore binary on a real port with the demo data:
//
//   - samples_test.go runs every x-codeSamples entry of the served document (cURL with
//     curl, JavaScript with node, Python with python3 and requests) and checks that
//     each reaches its operation and gets the documented success status;
//   - browser_test.go opens /docs in headless Chromium, checks the markers, the code
//     samples and try-it, and saves screenshots under e2e/test-output/.
//
// They need curl, node (18 or later), python3 with requests and chromium; the script
// scripts/setup-browser-tests installs what is missing. Without a tool the tests skip,
// naming it, unless PETSTORE_E2E=1 (which CI sets): then a missing tool fails them.
package e2e
