package petstore

import (
	"reflect"
	"testing"
	"time"
)

func TestTake(t *testing.T) {
	tests := []struct {
		name string
		in   PetState
		qty  int
		want PetState
		code string
	}{
		{"an order takes its quantity off the stock, holds it and counts", PetState{Available, 5, 0, 0, 0}, 2, PetState{Available, 3, 1, 2, 1}, ""},
		{"an order taking the stock to 0 makes the pet pending", PetState{Available, 2, 1, 3, 4}, 2, PetState{Pending, 0, 2, 5, 5}, ""},
		{"more than the stock is insufficient_stock", PetState{Available, 2, 0, 0, 0}, 3, PetState{Available, 2, 0, 0, 0}, EInsufficientStock},
		{"a pet sold out by another order is insufficient_stock", PetState{Pending, 0, 1, 1, 1}, 1, PetState{Pending, 0, 1, 1, 1}, EInsufficientStock},
		{"a pet restocked to 0 (sold) is insufficient_stock", PetState{Sold, 0, 0, 0, 3}, 1, PetState{Sold, 0, 0, 0, 3}, EInsufficientStock},
		{"a pending pet with too little stock is insufficient_stock", PetState{Pending, 1, 1, 1, 1}, 2, PetState{Pending, 1, 1, 1, 1}, EInsufficientStock},
		{"a pet staff took off sale (pending) is invalid_transition", PetState{Pending, 4, 1, 1, 1}, 1, PetState{Pending, 4, 1, 1, 1}, EInvalidTransition},
		{"a pet staff marked sold with stock is invalid_transition", PetState{Sold, 4, 0, 0, 0}, 1, PetState{Sold, 4, 0, 0, 0}, EInvalidTransition},
		{"quantity 0 is refused", PetState{Available, 5, 0, 0, 0}, 0, PetState{Available, 5, 0, 0, 0}, EValidationFailed},
		{"quantity 101 is refused", PetState{Available, 500, 0, 0, 0}, 101, PetState{Available, 500, 0, 0, 0}, EValidationFailed},
		{"quantity 100 is accepted", PetState{Available, 100, 0, 0, 0}, 100, PetState{Pending, 0, 1, 100, 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Take(tt.qty)
			if code := codeOf(err); code != tt.code {
				t.Fatalf("error code %q, want %q (%v)", code, tt.code, err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReturn(t *testing.T) {
	tests := []struct {
		name string
		in   PetState
		o    Order
		want PetState
		code string
	}{
		{"cancelling puts the held quantity back", PetState{Available, 3, 1, 2, 0}, Order{ID: 1, Quantity: 2}, PetState{Available, 5, 0, 0, 0}, ""},
		{"a pending pet becomes available", PetState{Pending, 0, 2, 3, 0}, Order{ID: 1, Quantity: 1}, PetState{Available, 1, 1, 2, 0}, ""},
		{"a sold pet stays sold", PetState{Sold, 0, 1, 1, 0}, Order{ID: 1, Quantity: 1}, PetState{Sold, 1, 0, 0, 0}, ""},
		{"a stock counted before units were held stays at the maximum", PetState{Available, MaxStock, 1, 0, 0}, Order{ID: 1, Quantity: 100}, PetState{Available, MaxStock, 0, 0, 0}, ""},
		{"a stock near the maximum takes back only what fits", PetState{Available, MaxStock - 30, 1, 0, 0}, Order{ID: 1, Quantity: 100}, PetState{Available, MaxStock, 0, 0, 0}, ""},
		{"a complete order cannot be cancelled", PetState{Sold, 0, 0, 0, 0}, Order{ID: 1, Quantity: 1, Complete: true, Status: Completed}, PetState{Sold, 0, 0, 0, 0}, EConflict},
		{"a cancelled order changes nothing again", PetState{Available, 3, 0, 0, 1}, Order{ID: 1, Quantity: 1, Status: Cancelled}, PetState{Available, 3, 0, 0, 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Return(tt.o)
			if code := codeOf(err); code != tt.code {
				t.Fatalf("error code %q, want %q (%v)", code, tt.code, err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCanDelete(t *testing.T) {
	tests := []struct {
		name    string
		in      PetState
		archive bool
		code    string
	}{
		{"a pet never ordered is erased", PetState{Available, 3, 0, 0, 0}, false, ""},
		{"a pet whose orders are all closed is archived", PetState{Sold, 0, 0, 0, 2}, true, ""},
		{"a pet with open orders stays", PetState{Pending, 0, 2, 2, 2}, false, EConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			archive, err := tt.in.CanDelete(1)
			if codeOf(err) != tt.code || archive != tt.archive {
				t.Fatalf("CanDelete = %v, %v; want archive %v, code %q", archive, err, tt.archive, tt.code)
			}
		})
	}
}

func TestFulfil(t *testing.T) {
	tests := []struct {
		name string
		in   PetState
		qty  int
		want PetState
	}{
		{"the last open order of a pet with no stock makes it sold", PetState{Pending, 0, 1, 2, 0}, 2, PetState{Sold, 0, 0, 0, 0}},
		{"another open order keeps the pet pending", PetState{Pending, 0, 2, 5, 0}, 3, PetState{Pending, 0, 1, 2, 0}},
		{"stock left keeps an available pet available", PetState{Available, 3, 1, 1, 0}, 1, PetState{Available, 3, 0, 0, 0}},
		{"a restocked pending pet with no other open order becomes available", PetState{Pending, 4, 1, 1, 0}, 1, PetState{Available, 4, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.Fulfil(tt.qty); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRestock(t *testing.T) {
	tests := []struct {
		name  string
		in    PetState
		stock int
		want  PetState
		code  string
	}{
		{"stock above 0 makes a sold pet available", PetState{Sold, 0, 0, 0, 0}, 3, PetState{Available, 3, 0, 0, 0}, ""},
		{"stock above 0 makes a pending pet with no open orders available", PetState{Pending, 0, 0, 0, 0}, 3, PetState{Available, 3, 0, 0, 0}, ""},
		{"stock above 0 keeps a pending pet with open orders pending", PetState{Pending, 0, 1, 1, 0}, 3, PetState{Pending, 3, 1, 1, 0}, ""},
		{"0 makes an available pet sold", PetState{Available, 4, 0, 0, 0}, 0, PetState{Sold, 0, 0, 0, 0}, ""},
		{"0 makes an available pet with open orders pending", PetState{Available, 4, 2, 2, 0}, 0, PetState{Pending, 0, 2, 2, 0}, ""},
		{"0 keeps a sold pet sold", PetState{Sold, 2, 0, 0, 0}, 0, PetState{Sold, 0, 0, 0, 0}, ""},
		{"negative stock is refused", PetState{Available, 4, 0, 0, 0}, -1, PetState{Available, 4, 0, 0, 0}, EValidationFailed},
		{"stock over a million is refused", PetState{Available, 4, 0, 0, 0}, MaxStock + 1, PetState{Available, 4, 0, 0, 0}, EValidationFailed},
		{"a million is accepted", PetState{Available, 4, 0, 0, 0}, MaxStock, PetState{Available, MaxStock, 0, 0, 0}, ""},
		{"units held by open orders count towards the maximum", PetState{Pending, 0, 1, 100, 0}, MaxStock, PetState{Pending, 0, 1, 100, 0}, EConflict},
		{"the maximum less the held units is accepted", PetState{Pending, 0, 1, 100, 0}, MaxStock - 100, PetState{Pending, MaxStock - 100, 1, 100, 0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Restock(tt.stock)
			if code := codeOf(err); code != tt.code {
				t.Fatalf("error code %q, want %q", code, tt.code)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckStatusChange(t *testing.T) {
	all := []PetStatus{Available, Pending, Sold}
	allowed := map[[2]PetStatus]bool{
		{Available, Pending}: true, {Pending, Available}: true, {Pending, Sold}: true,
		{Available, Sold}: true, {Sold, Available}: true,
		{Available, Available}: true, {Pending, Pending}: true, {Sold, Sold}: true,
	}
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]PetStatus{from, to}]
			name := string(from) + " to " + string(to)
			if want {
				name += " is allowed"
			} else {
				name += " is invalid_transition"
			}
			t.Run(name, func(t *testing.T) {
				err := CheckStatusChange(from, to)
				if want && err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !want && codeOf(err) != EInvalidTransition {
					t.Fatalf("got %v, want invalid_transition", err)
				}
			})
		}
	}
}

func TestCheckOrderUpdate(t *testing.T) {
	day := time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC)
	other := day.Add(time.Hour)
	yes, no := true, false
	complete := Order{ID: 1, Complete: true, Status: Completed, ShipDate: &day}
	tests := []struct {
		name string
		o    Order
		u    OrderUpdate
		code string
	}{
		{"an incomplete order takes any change", Order{ID: 1}, OrderUpdate{Complete: &yes, ShipDate: &other}, ""},
		{"completing a complete order again changes nothing", complete, OrderUpdate{Complete: &yes}, ""},
		{"sending the ship date it holds changes nothing", complete, OrderUpdate{ShipDate: &day}, ""},
		{"an empty change is allowed", complete, OrderUpdate{}, ""},
		{"completion cannot be undone", complete, OrderUpdate{Complete: &no}, EInvalidTransition},
		{"a complete order's ship date is fixed", complete, OrderUpdate{ShipDate: &other}, EInvalidTransition},
		{"a complete order without a ship date gets none", Order{ID: 1, Complete: true, Status: Completed}, OrderUpdate{ShipDate: &day}, EInvalidTransition},
		{"a cancelled order cannot be completed", Order{ID: 1, Status: Cancelled}, OrderUpdate{Complete: &yes}, EInvalidTransition},
		{"a cancelled order's ship date is fixed", Order{ID: 1, Status: Cancelled, ShipDate: &day}, OrderUpdate{ShipDate: &other}, EInvalidTransition},
		{"a cancelled order sent what it holds changes nothing", Order{ID: 1, Status: Cancelled, ShipDate: &day}, OrderUpdate{Complete: &no, ShipDate: &day}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := codeOf(CheckOrderUpdate(tt.o, tt.u)); code != tt.code {
				t.Fatalf("code %q, want %q", code, tt.code)
			}
		})
	}
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return ErrorCode(err)
}

func TestCheckShipDate(t *testing.T) {
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	tests := []struct {
		name string
		date *time.Time
		ok   bool
	}{
		{"no ship date is fine", nil, true},
		{"a date this century is fine", at("2026-12-24T10:00:00Z"), true},
		{"the first second of 2000 is fine", at("2000-01-01T00:00:00Z"), true},
		{"the last second of 2099 is fine", at("2099-12-31T23:59:59Z"), true},
		{"1999 is refused", at("1999-12-31T23:59:59Z"), false},
		{"2100 is refused", at("2100-01-01T00:00:00Z"), false},
		{"a date that is year 10000 in UTC is refused", at("9999-12-31T23:59:59-23:59"), false},
		{"year 1 is refused", at("0001-01-01T00:00:00Z"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckShipDate(tt.date)
			if (err == nil) != tt.ok || err != nil && codeOf(err) != EValidationFailed {
				t.Fatalf("CheckShipDate = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestRevise(t *testing.T) {
	sold := Pet{ID: 1, Name: "Rex", CategoryID: 2, Status: Sold}
	tests := []struct {
		name   string
		change func(PetFields) (PetFields, error)
		want   PetFields
		code   string
	}{
		{"a new name is trimmed", func(f PetFields) (PetFields, error) { f.Name = "  Max "; return f, nil }, PetFields{Name: "Max", CategoryID: 2, Status: Sold}, ""},
		{"an empty name is refused", func(f PetFields) (PetFields, error) { f.Name = " "; return f, nil }, PetFields{}, EValidationFailed},
		{"sold to pending is not a transition rule 7 allows", func(f PetFields) (PetFields, error) { f.Status = Pending; return f, nil }, PetFields{}, EInvalidTransition},
		{"the change's own refusal stands", func(f PetFields) (PetFields, error) { return f, Invalid("name", "x") }, PetFields{}, EValidationFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sold.Revise(tt.change)
			if codeOf(err) != tt.code || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Revise = %+v, %v; want %+v, %q", got, err, tt.want, tt.code)
			}
		})
	}
}

// A pet named before a rule of the text policy (here: no invisible characters) keeps
// its name through changes that leave it alone; a new name is held to the policy.
func TestReviseKeepsAnOldName(t *testing.T) {
	old := Pet{ID: 1, Name: "Rex\u200b", CategoryID: 2, Status: Available}
	sell := func(f PetFields) (PetFields, error) { f.Status = Sold; return f, nil }
	if got, err := old.Revise(sell); err != nil || got.Name != old.Name || got.Status != Sold {
		t.Errorf("selling a pet with an old name: %+v, %v", got, err)
	}
	rename := func(f PetFields) (PetFields, error) { f.Name = "Max\u200b"; return f, nil }
	if _, err := old.Revise(rename); codeOf(err) != EValidationFailed {
		t.Errorf("a new name with a zero-width space: %v; want validation_failed", err)
	}
}
