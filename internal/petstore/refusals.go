package petstore

import (
	"fmt"
	"strings"
)

// The refusals the stores report, worded once. A store finds the fact (no row, a
// unique or foreign key violated) and returns one of these; what the caller reads is
// decided here.

// NotFound is the error for an id that names nothing of its kind ("Pet", "Order",
// "Category", "Account", "API key"). For a customer, another account's object is not
// found either, in the same words.
func NotFound(kind string, id int64) *Error {
	return Errorf(ENotFound, "%s %d was not found.", kind, id)
}

// PetNotFound is the error for a pet id that names no pet.
func PetNotFound(id int64) *Error { return NotFound("Pet", id) }

// MessageNotFound is the error for a message id that names no message of the caller.
func MessageNotFound(id string) *Error {
	return Errorf(ENotFound, "Message %q was not found.", id)
}

// EventNotFound is the error for an event id that names no event of the feed.
func EventNotFound(id string) *Error {
	return Errorf(ENotFound, "Event %q was not found.", id)
}

// WebhookNotFound is the error for an id that names no webhook endpoint.
func WebhookNotFound(id int64) *Error { return NotFound("Webhook", id) }

// DeliveryNotFound is the error for an id that names no delivery (of the endpoint).
func DeliveryNotFound(id int64) *Error { return NotFound("Delivery", id) }

// EmailNotFound is the error for an email no account has. It does not repeat the
// email: it may reach a caller guessing addresses.
func EmailNotFound() *Error { return Errorf(ENotFound, "No account has this email.") }

// KeyNotFound is the error for a key hash no live key has.
func KeyNotFound() *Error { return Errorf(ENotFound, "The API key was not found.") }

// Conflicts with what is already there.
func EmailTaken() *Error { return Errorf(EConflict, "An account with this email already exists.") }

func CategoryNameTaken(name string) *Error {
	return Errorf(EConflict, "A category named %q already exists.", name)
}

func KeyExists() *Error { return Errorf(EConflict, "This API key already exists.") }

func MessageExists() *Error { return Errorf(EConflict, "A message with this id already exists.") }

// NotForSale is the refusal of an order for a pet without a price.
func NotForSale(id int64) *Error {
	return Errorf(ENotForSale, "Pet %d has no price; only a pet with a price can be ordered.", id)
}

// UnknownCategory is the refusal of a pet whose categoryId names no category.
func UnknownCategory() *Error { return Invalid("categoryId", "no category has this id") }

// CategoryInUse refuses to delete a category that pets still use.
func CategoryInUse(id int64) *Error {
	return Errorf(EConflict, "Category %d is used by pets; move or delete them first.", id)
}

// NameKey is a name in lower case, folded one character at a time (strings.ToLower:
// Unicode's simple mappings, no normalisation, so ß and SS stay apart). It is what
// makes a category name unique, and what the name filter of pets compares; stores keep
// it beside the name, so that every database folds as Go does.
func NameKey(name string) string { return strings.ToLower(name) }

// AccountRole is the role a new account gets: customer unless told otherwise, and
// only a role that exists.
func AccountRole(r Role) (Role, error) {
	if r == "" {
		return Customer, nil
	}
	if !r.Valid() {
		return "", Invalid("role", "must be customer or admin")
	}
	return r, nil
}

// WebhookDisabled refuses to retry a delivery of a disabled endpoint: pending, it
// would wait for the endpoint forever.
func WebhookDisabled(id int64) *Error {
	return Errorf(EConflict, "Webhook endpoint %d is disabled; enable it before retrying its deliveries.", id)
}

// TooManyWebhooks is the refusal of an endpoint past MaxWebhooks.
func TooManyWebhooks() *Error {
	return Errorf(EConflict, "The service keeps at most %d webhook endpoints; delete one first.", MaxWebhooks)
}

// TooManyTests is the refusal of a test event to an endpoint that has
// MaxPendingTests test deliveries pending.
func TooManyTests(id int64) *Error {
	return Errorf(EConflict, "Webhook endpoint %d has %d test deliveries pending; wait for them (GET /webhooks/%d/deliveries).",
		id, MaxPendingTests, id)
}

// StockPastMaximum refuses a stock that, with the held units of open orders, would
// pass MaxStock: cancelling those orders would then put the stock past it.
func StockPastMaximum(held int) *Error {
	return Errorf(EConflict, "Open orders hold %d units of this pet, so its stock can be at most %d until they complete or are cancelled.",
		held, MaxStock-held)
}

// LacksEventScope refuses a key that asks for events of type t (in the feed, a
// subscription or a delivery sent again) without scope, which reading them needs.
func LacksEventScope(scope string, t EventType) *Error {
	if scope == "" { // a type this version does not know
		return Errorf(EInsufficientScope, "This API key may not read %s events, a type this version of the service does not know.", t)
	}
	e := Errorf(EInsufficientScope, "This API key lacks the scope %s, which reading %s events needs.", scope, t)
	e.Scope = scope
	return e
}

// AllEventsNeedEveryScope refuses "*" to a key limited to some scopes: it takes the
// event types added later, whose scopes such a key is never given.
func AllEventsNeedEveryScope() *Error {
	return Errorf(EInsufficientScope, `This API key is limited to some scopes, and "*" also takes the event types `+
		`added later, whose scopes it does not hold: subscribe to the types by name, or use a key with every scope of its role.`)
}

// PendingUnreadable refuses a key a new URL for an endpoint that has deliveries of
// type t pending, which the new URL would be sent, when the key lacks scope.
func PendingUnreadable(scope string, t EventType) *Error {
	e := LacksEventScope(scope, t)
	e.Message += fmt.Sprintf(" The endpoint has %s deliveries pending, which a new URL would be sent; disabling it first fails them.", t)
	return e
}
