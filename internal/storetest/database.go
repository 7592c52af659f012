package storetest

import "testing"

func testDatabase(t *testing.T, open Opener) {
	t.Run("a new store answers a ping", func(t *testing.T) {
		f := setup(t, open)
		must(t, f.s.Ping(f.ctx))
	})
}
