package petstore

import "time"

// SalesGroupBy is how a sales report groups its figures.
type SalesGroupBy string

// The groupings of GetSalesReport.
const (
	SalesByDay      SalesGroupBy = "day"      // one group per day that had orders, oldest first
	SalesByPet      SalesGroupBy = "pet"      // the pets with the most revenue
	SalesByCategory SalesGroupBy = "category" // the categories with the most revenue
)

// SalesReportOptions say which days a report covers and how it groups them.
type SalesReportOptions struct {
	// From and To are the first and last day of the report (UTC; both included; at
	// most 366 days). Only their UTC date counts. Zero To is today; zero From is 29
	// days before To.
	From, To time.Time
	GroupBy  SalesGroupBy // SalesByDay when empty
	Limit    int          // at most this many groups for SalesByPet and SalesByCategory (1–1,000); 0 for the service's 100
}

// SalesFigures are what some orders sold. Revenues are in the minor unit of the
// report's Currency.
type SalesFigures struct {
	Orders  int64 // orders placed that are not cancelled (placed and completed)
	Units   int64 // their units
	Revenue int64 // their totals
	// The orders placed in the range that were cancelled since, apart.
	CancelledOrders  int64
	CancelledUnits   int64
	CancelledRevenue int64 // what they would have brought in
}

// SalesGroup is the figures of one group: Day for SalesByDay; PetID and PetName for
// SalesByPet; CategoryID and CategoryName for SalesByCategory (CategoryID 0 for the
// orders whose pet was gone before the service kept prices; CategoryName "" when the
// category is gone).
type SalesGroup struct {
	Day          time.Time // midnight UTC
	PetID        int64
	PetName      string
	CategoryID   int64
	CategoryName string
	SalesFigures
}

// SalesReport is what the shop sold over a range of days.
type SalesReport struct {
	From, To time.Time // the first and last day, midnight UTC
	GroupBy  SalesGroupBy
	Currency string       // the shop's ISO 4217 code, which every revenue is in
	Totals   SalesFigures // every order of the range, whatever Groups holds
	// Groups are the figures by GroupBy. A day without orders is left out of a report
	// by day: count it as 0.
	Groups []SalesGroup
}
