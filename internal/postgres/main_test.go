package postgres_test

import (
	"os"
	"testing"

	"github.com/acme-pets/petstore/internal/storetest"
)

// TestMain runs more tests at once than -parallel's default (storetest.Parallel).
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
