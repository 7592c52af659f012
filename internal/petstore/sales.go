package petstore

import (
	"time"
)

// The sales report counts orders per day, pet and category. Stores keep those figures
// in a summary, changed in the transaction of every order placed or cancelled by the
// lines these functions return, so that a report reads the summary of its days, not
// every order: its cost does not grow with the orders the shop holds.

// DefaultCurrency is the shop's currency until the operator sets another.
const DefaultCurrency = "EUR"

// CurrencyChange decides whether a shop whose database holds the currency stored
// (empty: none yet, so its orders were priced in DefaultCurrency) may take code:
// always while it has no priced orders (orders placed before prices have no amount to
// be in a currency); otherwise only if it is the same.
func CurrencyChange(stored, code string, hasPricedOrders bool) error {
	if stored == "" {
		stored = DefaultCurrency
	}
	if stored == code || !hasPricedOrders {
		return nil
	}
	return Errorf(EConflict, "The shop's orders are in %s; it cannot change its currency to %s (start with --currency %s).", stored, code, stored)
}

// SalesFigures are what a group of orders sold: the orders not cancelled (placed and
// completed alike) and, apart, the cancelled ones. Revenue is in the minor unit of the
// shop's currency.
type SalesFigures struct {
	Orders, Units, Revenue                            int64
	CancelledOrders, CancelledUnits, CancelledRevenue int64
}

// Add adds f's figures to s.
func (s *SalesFigures) Add(f SalesFigures) {
	s.Orders += f.Orders
	s.Units += f.Units
	s.Revenue += f.Revenue
	s.CancelledOrders += f.CancelledOrders
	s.CancelledUnits += f.CancelledUnits
	s.CancelledRevenue += f.CancelledRevenue
}

// SalesLine is a change to the summary: figures to add to those of a day (UTC, as
// 2006-01-02), a pet and the category the pet had when its orders were placed.
type SalesLine struct {
	Day        string
	PetID      int64
	CategoryID int64
	SalesFigures
}

// SalesDay is the day an order placed at t counts on: its date in UTC.
func SalesDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Sales are the summary lines of a batch's placed orders: one per day, pet and
// category, in the order they first appear.
func (b OrderBatch) Sales() []SalesLine {
	var out []SalesLine
	for i := range b.Plans {
		p := &b.Plans[i]
		if p.Outcome != Place {
			continue
		}
		o := &p.Order
		l := SalesLine{Day: SalesDay(o.CreatedAt), PetID: o.PetID, CategoryID: o.CategoryID}
		l.Orders, l.Units, l.Revenue = 1, int64(o.Quantity), revenue(*o)
		out = addLine(out, l)
	}
	return out
}

// SalesRollups are the summaries a store keeps beside the one per day, pet and
// category, each with fewer rows, so that a report reads only the rows of its
// grouping: per day (the totals and the report by day, a row a day) and per day and
// category.
type SalesRollups struct {
	Days, Categories []SalesLine
}

// Rollup merges lines into the day and the day-and-category summaries: PetID (and
// CategoryID) zero, one line each.
func Rollup(lines []SalesLine) SalesRollups {
	var r SalesRollups
	for _, l := range lines {
		l.PetID = 0
		r.Categories = addLine(r.Categories, l)
		l.CategoryID = 0
		r.Days = addLine(r.Days, l)
	}
	return r
}

func addLine(lines []SalesLine, l SalesLine) []SalesLine {
	for i := range lines {
		if lines[i].Day == l.Day && lines[i].PetID == l.PetID && lines[i].CategoryID == l.CategoryID {
			lines[i].Add(l.SalesFigures)
			return lines
		}
	}
	return append(lines, l)
}

// CancelledSales is the summary line of cancelling order o: it moves from the sold
// figures of the day it was placed on to the cancelled ones.
func CancelledSales(o Order) SalesLine {
	r, q := revenue(o), int64(o.Quantity)
	return SalesLine{Day: SalesDay(o.CreatedAt), PetID: o.PetID, CategoryID: o.CategoryID, SalesFigures: SalesFigures{
		Orders: -1, Units: -q, Revenue: -r, CancelledOrders: 1, CancelledUnits: q, CancelledRevenue: r,
	}}
}

// revenue is what order o brings in: its total, 0 for an order placed before prices.
func revenue(o Order) int64 {
	if t := o.Total(); t != nil {
		return *t
	}
	return 0
}

// SalesGrouping is how a report groups its figures.
type SalesGrouping string

// The groupings of a sales report.
const (
	ByDay      SalesGrouping = "day"
	ByPet      SalesGrouping = "pet"
	ByCategory SalesGrouping = "category"
)

// MaxSalesDays bounds the days of one report, and MaxSalesGroups its groups by pet or
// category.
const (
	MaxSalesDays   = 366
	MaxSalesGroups = 1000
)

// SalesQuery asks for a report of the days From to To (UTC dates, both included).
type SalesQuery struct {
	From, To time.Time
	GroupBy  SalesGrouping
	// Limit bounds the groups by pet or category: those with the most revenue.
	Limit int
}

// Validate checks the range: From not after To, at most MaxSalesDays days. The
// dates are taken as UTC days.
func (q *SalesQuery) Validate() error {
	q.From = day(q.From)
	q.To = day(q.To)
	if q.From.After(q.To) {
		return Invalid("from", "must not be after to")
	}
	if days := int(q.To.Sub(q.From).Hours()/24) + 1; days > MaxSalesDays {
		return Invalid("to", "must be at most 366 days from from")
	}
	if q.Limit < 1 || q.Limit > MaxSalesGroups {
		return Invalid("limit", "must be 1 to 1000")
	}
	return nil
}

func day(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// SalesGroup is the figures of one group of a report: Day (by day), PetID and PetName
// (by pet), or CategoryID and CategoryName (by category).
type SalesGroup struct {
	Day          time.Time
	PetID        int64
	PetName      string
	CategoryID   int64
	CategoryName string
	SalesFigures
}

// SalesReport is the answer to a SalesQuery: the figures of every order of the range
// and those of its groups.
type SalesReport struct {
	Query  SalesQuery
	Totals SalesFigures
	Groups []SalesGroup
}
