package petstore

import "time"

// The store rules of the contract (stock, orders and pet status), as plain functions
// over plain values. Storage loads a PetState inside a transaction, applies one of these
// and writes the result back in the same transaction, so stock, orders and status can
// never disagree.

// PetState is what the store rules look at: a pet's status, its stock, how many
// incomplete orders it has and the units those orders hold, and how many orders it
// ever had (a pet that had any is archived, not erased, when deleted).
//
// Stock and Held together are the units the shop has of the pet (on the shelf, and
// set aside for open orders). Their sum never exceeds MaxStock: an order moves units
// from Stock to Held, a cancellation moves them back and a completion lets them go, so
// only Restock can raise the sum, and it is the one place that checks it. A stock is
// then always within the document's bound, whatever is cancelled later.
type PetState struct {
	Status     PetStatus
	Stock      int
	OpenOrders int
	Held       int
	Orders     int
}

// Take applies rules 1–3 to an order of quantity units: it needs 1–100 units of a pet
// with enough stock and the available status, takes them off the stock, and a stock
// of 0 makes the pet pending. (Whether the pet is for sale at all, with a price, is
// PlanOrders' to ask first.)
//
// The stock is looked at before the status, so that sold out is one refusal,
// insufficient_stock, whichever status the stock-out gave the pet (pending after an
// order took the last unit, sold after a restock to 0); invalid_transition is left
// for a pet staff took off sale with stock on the shelf.
func (s PetState) Take(quantity int) (PetState, error) {
	if quantity < 1 || quantity > MaxOrderQuantity {
		return s, Invalid("quantity", "must be 1 to 100")
	}
	if s.Stock < quantity {
		return s, Errorf(EInsufficientStock, "%d in stock, fewer than the %d ordered.", s.Stock, quantity)
	}
	if s.Status != Available {
		return s, Errorf(EInvalidTransition, "The pet is %s; only an available pet can be ordered.", s.Status)
	}
	s.Stock -= quantity
	s.Held += quantity
	s.OpenOrders++
	s.Orders++
	if s.Stock == 0 {
		s.Status = Pending
	}
	return s, nil
}

// Return applies rule 4, the cancelling of order o of the pet: a complete order cannot
// be cancelled; otherwise its quantity goes back on the stock and a pending pet becomes
// available.
//
// The stock stays within MaxStock even for a pet whose units were counted before Held
// was kept (a stock set to the maximum while orders were open): the units past it are
// not put back, as a stock the document forbids would fail every client that checks
// answers against it.
func (s PetState) Return(o Order) (PetState, error) {
	if already, err := o.CheckCancel(); err != nil || already {
		return s, err
	}
	s.Stock = min(s.Stock+o.Quantity, MaxStock)
	s.Held = max(s.Held-o.Quantity, 0)
	s.OpenOrders--
	if s.Status == Pending {
		s.Status = Available
	}
	return s, nil
}

// CheckCancel decides whether order o may be cancelled: not once it is complete;
// already reports an order cancelled before, which a cancellation leaves as it is (a
// retried DELETE is not an error). Stores ask before they load the pet, which a
// complete or cancelled order may outlive.
func (o Order) CheckCancel() (already bool, err error) {
	switch o.Status {
	case Completed:
		return false, Errorf(EConflict, "Order %d is complete and cannot be cancelled.", o.ID)
	case Cancelled:
		return true, nil
	}
	return false, nil
}

// CanDelete decides whether the pet with id may be deleted: not while it has
// incomplete orders. archive says whether it had any order: such a pet leaves the
// catalogue but is kept for the history of its orders (the sales report names it);
// one never ordered is erased.
func (s PetState) CanDelete(id int64) (archive bool, err error) {
	if s.OpenOrders > 0 {
		return false, Errorf(EConflict, "Pet %d has %d incomplete orders; complete or cancel them first.", id, s.OpenOrders)
	}
	return s.Orders > 0, nil
}

// Fulfil applies rule 5, the completing of one of the pet's orders, of quantity
// units, which leave the shop: when the stock is 0 and no other order is open, the pet
// is sold. The contract is silent on a pending pet that was restocked while orders
// were open (rule 6 keeps it pending); when its last open order completes it becomes
// available again, as it would had that order been cancelled.
func (s PetState) Fulfil(quantity int) PetState {
	s.OpenOrders--
	s.Held = max(s.Held-quantity, 0)
	switch {
	case s.OpenOrders > 0:
	case s.Stock == 0:
		s.Status = Sold
	case s.Status == Pending:
		s.Status = Available
	}
	return s
}

// Restock applies rule 6: a stock above 0 makes a sold or pending pet with no open
// orders available; a stock of 0 makes an available pet sold, or pending while orders
// are open. With the units open orders hold, the stock may not pass MaxStock: the
// refusal says how much it may be.
func (s PetState) Restock(stock int) (PetState, error) {
	if stock < 0 || stock > MaxStock {
		return s, Invalid("quantity", "must be 0 to 1000000")
	}
	if stock > MaxStock-s.Held {
		return s, StockPastMaximum(s.Held)
	}
	s.Stock = stock
	switch {
	case stock > 0 && s.OpenOrders == 0 && (s.Status == Sold || s.Status == Pending):
		s.Status = Available
	case stock == 0 && s.Status == Available && s.OpenOrders > 0:
		s.Status = Pending
	case stock == 0 && s.Status == Available:
		s.Status = Sold
	}
	return s, nil
}

// manualTransitions are the status changes an admin may make by hand (rule 7).
var manualTransitions = map[[2]PetStatus]bool{
	{Available, Pending}: true,
	{Pending, Available}: true,
	{Pending, Sold}:      true,
	{Available, Sold}:    true,
	{Sold, Available}:    true,
}

// Revise applies change to the fields of pet p and checks what it returns: valid
// fields (the name normalised) and a status change rule 7 allows. The stock is not
// the fields' to change. A name kept exactly as it is is not checked again: a pet
// named before a rule of the text policy keeps its name through other changes (a sale,
// a new category) until it is renamed.
func (p Pet) Revise(change func(PetFields) (PetFields, error)) (PetFields, error) {
	f, err := change(p.Fields())
	if err != nil {
		return PetFields{}, err
	}
	check := f.Validate
	if f.Name == p.Name {
		check = f.validateKeepingName
	}
	if err := check(); err != nil {
		return PetFields{}, err
	}
	if err := CheckStatusChange(p.Status, f.Status); err != nil {
		return PetFields{}, err
	}
	return f, nil
}

// CheckStatusChange checks a manual status change (PUT or PATCH of a pet) against
// rule 7; it changes nothing. Keeping the status is always allowed.
func CheckStatusChange(from, to PetStatus) error {
	if from == to || manualTransitions[[2]PetStatus{from, to}] {
		return nil
	}
	return Errorf(EInvalidTransition, "A pet cannot go from %s to %s.", from, to)
}

// CheckOrderUpdate applies rule 5's other half to an admin's change of order o:
// completing makes an order immutable, so on a complete order any real change is
// EInvalidTransition (sending what it already holds changes nothing and is allowed).
//
// A cancelled order is as immutable: completing it, or a new ship date, is
// EInvalidTransition, and sending what it holds changes nothing.
func CheckOrderUpdate(o Order, u OrderUpdate) error {
	if err := CheckShipDate(u.ShipDate); err != nil {
		return err
	}
	switch o.Status {
	case Completed:
		if u.Complete != nil && !*u.Complete {
			return Errorf(EInvalidTransition, "Order %d is complete; completion cannot be undone.", o.ID)
		}
	case Cancelled:
		if u.Complete != nil && *u.Complete {
			return Errorf(EInvalidTransition, "Order %d is cancelled and cannot be completed.", o.ID)
		}
	default:
		return nil
	}
	if u.ShipDate != nil && (o.ShipDate == nil || !u.ShipDate.Equal(*o.ShipDate)) {
		return Errorf(EInvalidTransition, "Order %d is %s and can no longer change.", o.ID, o.Status)
	}
	return nil
}

// Final reports whether order o can no longer change (completed or cancelled).
func (o Order) Final() bool { return o.Status == Completed || o.Status == Cancelled }

// The bounds of a ship date: a business bound (an order ships in this century), well
// inside the years 0001–9999 that every instant keeps to (CheckInstant).
var (
	EarliestShipDate = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)
	LatestShipDate   = time.Date(2099, time.December, 31, 23, 59, 59, 0, time.UTC)
)

// CheckShipDate refuses a ship date outside EarliestShipDate–LatestShipDate; nil is
// no ship date, which is fine.
func CheckShipDate(t *time.Time) error {
	if t == nil {
		return nil
	}
	return checkWithin("shipDate", *t, EarliestShipDate, LatestShipDate)
}
