package storetest

import (
	"flag"
	"strconv"
	"testing"
)

// Parallel is how many tests a store package runs at once unless -parallel says
// otherwise. The suite's tests wait on the database (a new store, its migrations,
// durable commits) far more than they compute: at -parallel's default, GOMAXPROCS (2
// on the CI machine), the cores sat idle and the suite took minutes. A PostgreSQL
// test's pool holds at most pgtest.MaxConns connections, so 8 at once stay well
// within max_connections (100).
const Parallel = 8

// Main runs a store package's tests, with -parallel at Parallel unless the command
// line set it, and returns their exit code; the package's TestMain calls it.
func Main(m *testing.M) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(Parallel)); err != nil {
			panic(err)
		}
	}
	return m.Run()
}
