package petstore

import (
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// PetStatus is the status of an animal in the store.
type PetStatus string

// The pet statuses.
const (
	Available PetStatus = "available"
	Pending   PetStatus = "pending"
	Sold      PetStatus = "sold"
)

// Valid reports whether s is one of the known statuses.
func (s PetStatus) Valid() bool {
	return s == Available || s == Pending || s == Sold
}

// Pet is an animal in the store. Stock is its inventory count; Price, when set, is
// what one unit costs in the minor unit of the shop's currency (nil: not for sale).
type Pet struct {
	ID          int64
	Name        string
	CategoryID  int64
	Status      PetStatus
	Stock       int
	Price       *int64
	Description string
	// Tags are as written, in the order given; TagKey tells them apart.
	Tags []string
	// Photos are in the order staff gave them; a PhotoStore changes them, never an
	// update of the pet's fields.
	Photos []Photo
}

// Fields are the fields of p a client sets.
func (p Pet) Fields() PetFields {
	return PetFields{Name: p.Name, CategoryID: p.CategoryID, Status: p.Status, Price: p.Price, Description: p.Description, Tags: p.Tags}
}

// Pet is the pet with this id, these fields and this stock, and no photos yet (a
// change of its fields keeps the photos it has: the caller sets them). Its lists are
// never nil, as a store reads them back.
func (f PetFields) Pet(id int64, stock int) Pet {
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	return Pet{ID: id, Name: f.Name, CategoryID: f.CategoryID, Status: f.Status, Stock: stock, Price: f.Price,
		Description: f.Description, Tags: tags, Photos: []Photo{}}
}

// PetFields are the fields a client sets on a pet (create, replace, patch result).
type PetFields struct {
	Name        string
	CategoryID  int64
	Status      PetStatus
	Price       *int64
	Description string
	Tags        []string
}

// MaxPetDescription bounds a pet's description, in characters; MaxTags the tags a pet
// holds (and a filter asks for); MaxTag a tag's length.
const (
	MaxPetDescription = 2000
	MaxTags           = 10
	MaxTag            = 32
)

// TagKey is the form in which tags are compared, stored in the index and looked for:
// a tag's NameKey, as names are folded.
func TagKey(tag string) string { return NameKey(tag) }

// CleanTags trims each tag and checks it as a name of 1–MaxTag characters, and that no
// two are one tag (TagKey); field names the list in errors (tags[2]). The result is a
// new slice; nil stays nil.
func CleanTags(field string, tags []string) ([]string, error) {
	if len(tags) > MaxTags {
		return nil, Invalid(field, "must hold at most "+strconv.Itoa(MaxTags)+" tags")
	}
	if tags == nil {
		return nil, nil
	}
	out := make([]string, len(tags))
	for i, t := range tags {
		name := field + "[" + strconv.Itoa(i) + "]"
		c, err := cleanTag(name, t)
		if err != nil {
			return nil, err
		}
		for j := range i {
			if TagKey(out[j]) == TagKey(c) {
				return nil, Invalid(name, fmt.Sprintf("repeats %s[%d] (tags are told apart without regard to case)", field, j))
			}
		}
		out[i] = c
	}
	return out, nil
}

// cleanTag trims a tag and checks it as a name of 1–MaxTag characters.
func cleanTag(field, t string) (string, error) {
	c, err := CleanName(field, t)
	if err != nil {
		return "", err
	}
	if utf8.RuneCountInString(c) > MaxTag {
		return "", Invalid(field, fmt.Sprintf("must be 1 to %d characters (after trimming white space)", MaxTag))
	}
	return c, nil
}

// checkPetDescription checks a pet's description: free text of at most
// MaxPetDescription characters.
func checkPetDescription(s string) error {
	if err := CheckFreeText("description", s); err != nil {
		return err
	}
	if utf8.RuneCountInString(s) > MaxPetDescription {
		return Invalid("description", "must be at most 2000 characters")
	}
	return nil
}

// MaxPrice bounds a pet's price, in the minor unit of the currency (a million euros
// in cents): a total of MaxOrderQuantity units then fits every client's integers.
const MaxPrice = 100_000_000

// CheckPrice refuses a price outside 0–MaxPrice; nil is no price, which is fine.
func CheckPrice(p *int64) error {
	if p != nil && (*p < 0 || *p > MaxPrice) {
		return Invalid("price", "must be 0 to 100000000")
	}
	return nil
}

// Validate normalises the name and checks every field.
func (f *PetFields) Validate() error {
	name, err := CleanName("name", f.Name)
	if err != nil {
		return err
	}
	f.Name = name
	return f.validateKeepingName()
}

// validateKeepingName checks every field but the name, which a change keeps as it is
// (see Pet.Revise).
func (f *PetFields) validateKeepingName() error {
	if f.CategoryID < 1 {
		return Invalid("categoryId", "must be a category id")
	}
	if !f.Status.Valid() {
		return Invalid("status", "must be available, pending or sold")
	}
	if err := CheckPrice(f.Price); err != nil {
		return err
	}
	if err := checkPetDescription(f.Description); err != nil {
		return err
	}
	tags, err := CleanTags("tags", f.Tags)
	if err != nil {
		return err
	}
	f.Tags = tags
	return nil
}

// PetFilter selects pets in a list. Zero fields do not filter.
type PetFilter struct {
	Status     PetStatus
	CategoryID int64
	IDs        []int64
	// Name keeps the pets whose name contains it in any letter case: NameKey of the
	// pet's name holds NameKey of Name, as plain text (no character is a wildcard).
	Name string
	// Tags keeps the pets that have every one of them (compared by TagKey).
	Tags []string
}

// TagKeys are the TagKey of each tag sought, without repeats, sorted: what the stores
// look for in their tag indexes.
func (f PetFilter) TagKeys() []string {
	keys := make([]string, len(f.Tags))
	for i, t := range f.Tags {
		keys[i] = TagKey(t)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Validate normalises the name filter as a pet's name is (CleanName: trimmed, then
// 1–100 characters under the text policy for names), since it is looked for in names
// stored so, and refuses one that breaks that policy on the field name; invisible
// characters aside, which names stored before they were refused may hold. An empty
// name does not filter and is left alone.
func (f *PetFilter) Validate() error {
	if len(f.Tags) > MaxTags {
		return Invalid("tag", "must be given at most "+strconv.Itoa(MaxTags)+" times")
	}
	for i, t := range f.Tags {
		// A tag is sought as it is stored: a name of 1–MaxTag characters, trimmed.
		c, err := cleanTag("tag", t)
		if err != nil {
			return err
		}
		f.Tags[i] = c
	}
	if f.Name == "" {
		return nil
	}
	name, err := cleanSought("name", f.Name)
	if err != nil {
		return err
	}
	f.Name = name
	return nil
}

// InventoryFilter selects the pets whose stock a list shows. Zero fields do not
// filter.
type InventoryFilter struct {
	Status PetStatus
	IDs    []int64
}

// Pets is the pet filter that selects the same pets.
func (f InventoryFilter) Pets() PetFilter {
	return PetFilter{Status: f.Status, IDs: f.IDs}
}

// Category is a kind of animal.
type Category struct {
	ID          int64
	Name        string
	Description string
}

// Validate normalises the name and checks every field.
func (c *Category) Validate() error {
	name, err := CleanName("name", c.Name)
	if err != nil {
		return err
	}
	c.Name = name
	return CheckDescription("description", c.Description)
}

// ValidateReplacing is Validate for a replacement of a stored category, which may
// keep a name stored before invisible characters were refused (as Pet.Revise lets a
// pet keep its name). keepName reports that the name is such a one: the store
// replaces the category only if its name is exactly c.Name, and answers err
// otherwise.
func (c *Category) ValidateReplacing() (keepName bool, err error) {
	err = c.Validate()
	if err == nil {
		return false, nil
	}
	name, cerr := cleanSought("name", c.Name)
	if cerr != nil || CheckDescription("description", c.Description) != nil {
		return false, err
	}
	c.Name = name
	return true, err
}

// InventoryItem is the stock of one pet.
type InventoryItem struct {
	PetID    int64
	Quantity int
	Status   PetStatus
}

// OrderStatus is where an order is in its life.
type OrderStatus string

// The order statuses: placed (its units are held), then completed or cancelled, each
// for good.
const (
	Placed    OrderStatus = "placed"
	Completed OrderStatus = "completed"
	Cancelled OrderStatus = "cancelled"
)

// Valid reports whether s is one of the known statuses.
func (s OrderStatus) Valid() bool {
	return s == Placed || s == Completed || s == Cancelled
}

// Order is a customer order for a number of units of one pet. Everything but the ship
// date is fixed when it happens: the price, the pet's name and category when the order
// was placed, the time of its completion or cancellation.
type Order struct {
	ID        int64
	PetID     int64
	AccountID int64
	Quantity  int
	ShipDate  *time.Time
	Complete  bool
	Status    OrderStatus
	CreatedAt time.Time
	// CompletedAt and CancelledAt are set when the order completed or was cancelled;
	// an order completed before they were kept may lack CompletedAt.
	CompletedAt *time.Time
	CancelledAt *time.Time
	// UnitPrice is the pet's price when the order was placed; nil for an order placed
	// before prices were kept.
	UnitPrice *int64
	// PetName is the pet's name when the order was placed; empty for an order whose
	// pet was gone before names were kept with orders.
	PetName string
	// CategoryID is the pet's category when the order was placed (0 when unknown):
	// the sales report counts the order under it.
	CategoryID int64
	// Currency is the shop's currency, which UnitPrice is in.
	Currency string
}

// Total is UnitPrice × Quantity, nil without a unit price.
func (o Order) Total() *int64 {
	if o.UnitPrice == nil {
		return nil
	}
	t := *o.UnitPrice * int64(o.Quantity)
	return &t
}

// OrderFilter selects orders in a list. Zero fields do not filter.
type OrderFilter struct {
	AccountID int64
	Status    OrderStatus
	// CreatedAfter (included) and CreatedBefore (excluded) bound CreatedAt.
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// Oldest lists the oldest orders first; the newest come first otherwise.
	Oldest bool
}

// OrderUpdate is an admin's change to an order; nil fields are left as they are.
type OrderUpdate struct {
	Complete *bool
	ShipDate *time.Time
}
