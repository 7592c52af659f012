package webhook

import (
	"net/netip"
	"time"
)

// TreatAsPublic makes s take every address as public, so that tests whose receivers
// are on loopback can see what a public receiver's failures say.
func TreatAsPublic(s *Sender) { s.isPublic = func(netip.Addr) bool { return true } }

// MaxRecord is maxRecord, the most results one record writes.
const MaxRecord = maxRecord

// SetBusyGather sets how long d's paced claims and records gather while busy
// (busyGather), before d runs.
func SetBusyGather(d *Dispatcher, g time.Duration) { d.gather = g }
