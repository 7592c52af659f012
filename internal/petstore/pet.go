package petstore

import (
	"time"
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

// Pet is an animal in the store. Stock is its inventory count.
type Pet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     PetStatus
	Stock      int
}

// PetFields are the fields a client sets on a pet (create, replace, patch result).
type PetFields struct {
	Name       string
	CategoryID int64
	Status     PetStatus
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
}

// Validate normalises the name filter as a pet's name is (CleanName: trimmed, then
// 1–100 characters under the text policy for names), since it is looked for in names
// stored so, and refuses one that breaks that policy on the field name; invisible
// characters aside, which names stored before they were refused may hold. An empty
// name does not filter and is left alone.
func (f *PetFilter) Validate() error {
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

// Order is a customer order for a number of units of one pet.
type Order struct {
	ID        int64
	PetID     int64
	AccountID int64
	Quantity  int
	ShipDate  *time.Time
	Complete  bool
	CreatedAt time.Time
}

// OrderFilter selects orders in a list. Zero fields do not filter.
type OrderFilter struct {
	AccountID int64
	Complete  *bool
}

// OrderUpdate is an admin's change to an order; nil fields are left as they are.
type OrderUpdate struct {
	Complete *bool
	ShipDate *time.Time
}
