package photo

import (
	"os"
	"path/filepath"
	"testing"
)

// The images the tests send come from phototest, made with the standard encoders;
// WebP, which Go cannot encode, comes from testdata.

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
