package petstore

import "time"

// Every instant a request sends (a key's expiresAt, an order's shipDate) is checked
// here before it reaches a store. The API writes instants back in UTC as RFC 3339,
// whose years have four digits, and a change writes its events as JSON in its
// transaction: an instant whose offset carries it past the last second of 9999
// (9999-12-31T23:59:59-23:59 is in year 10000 in UTC) was taken, then failed the
// event's JSON inside the transaction, a 500 on both stores. So every instant must
// lie within EarliestInstant–LatestInstant once in UTC, which every store and every
// reader holds; a field may bound it more narrowly (a ship date: this century).
var (
	EarliestInstant = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	LatestInstant   = time.Date(9999, time.December, 31, 23, 59, 59, 0, time.UTC)
)

// CheckInstant refuses an instant outside EarliestInstant–LatestInstant on field.
func CheckInstant(field string, t time.Time) error {
	return checkWithin(field, t, EarliestInstant, LatestInstant)
}

// checkWithin refuses t on field unless it lies within earliest–latest, both in UTC
// and included. The refusal says the bounds hold in UTC: an instant sent with an
// offset may look inside them and not be.
func checkWithin(field string, t, earliest, latest time.Time) error {
	if t.Before(earliest) || t.After(latest) {
		return Invalid(field, "must be from "+earliest.Format(time.RFC3339)+" to "+latest.Format(time.RFC3339)+
			" in UTC, its offset applied")
	}
	return nil
}
