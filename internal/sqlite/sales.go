package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Currency is the shop's currency: what SetCurrency made it, or what the database
// holds, or petstore.DefaultCurrency for a new one.
func (db *DB) Currency() string {
	if c := db.currency.Load(); c != nil {
		return *c
	}
	return petstore.DefaultCurrency
}

// loadCurrency reads the currency the database holds, if it holds one.
func (db *DB) loadCurrency(ctx context.Context) error {
	var code string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'currency'`).Scan(&code)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load currency: %w", err)
	}
	if code != "" {
		db.currency.Store(&code)
	}
	return nil
}

// SetCurrency makes code the shop's currency, unless the database has orders in
// another (petstore.CurrencyChange decides).
func (db *DB) SetCurrency(ctx context.Context, code string) error {
	// The usual start names the currency the database holds: that writes nothing
	// (a database on a read-only disk then fails at the readiness check, as it would).
	if err := db.loadCurrency(ctx); err != nil {
		return err
	}
	if c := db.currency.Load(); c != nil && *c == code {
		return nil
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		var stored string
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'currency'`).Scan(&stored)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var orders bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM orders WHERE unit_price IS NOT NULL)`).Scan(&orders); err != nil {
			return err
		}
		if err := petstore.CurrencyChange(stored, code, orders); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('currency', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, code)
		return err
	})
	if err != nil {
		return fmt.Errorf("set currency: %w", err)
	}
	db.currency.Store(&code)
	return nil
}

const (
	// qAddSales, qAddSalesDay and qAddSalesCategory add a line (petstore.SalesLine) to
	// the sales summary per day, pet and category, and to its rollups per day and per
	// day and category.
	qAddSales = `INSERT INTO sales_daily (day, pet_id, category_id, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (day, pet_id, category_id) DO UPDATE SET ` + addFigures
	qAddSalesDay = `INSERT INTO sales_days (day, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (day) DO UPDATE SET ` + addFigures
	qAddSalesCategory = `INSERT INTO sales_categories (day, category_id, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (day, category_id) DO UPDATE SET ` + addFigures
	addFigures = `orders = orders + excluded.orders, units = units + excluded.units, revenue = revenue + excluded.revenue,
			cancelled_orders = cancelled_orders + excluded.cancelled_orders,
			cancelled_units = cancelled_units + excluded.cancelled_units,
			cancelled_revenue = cancelled_revenue + excluded.cancelled_revenue`
)

// addSales adds lines to the sales summary and its rollups, in the transaction of the
// orders they count.
func addSales(ctx context.Context, db *DB, tx *sql.Tx, lines []petstore.SalesLine) error {
	if len(lines) == 0 {
		return nil
	}
	r := petstore.Rollup(lines)
	for _, w := range []struct {
		q     string
		lines []petstore.SalesLine
		key   func(petstore.SalesLine) []any
	}{
		{qAddSales, lines, func(l petstore.SalesLine) []any { return []any{l.Day, l.PetID, l.CategoryID} }},
		{qAddSalesDay, r.Days, func(l petstore.SalesLine) []any { return []any{l.Day} }},
		{qAddSalesCategory, r.Categories, func(l petstore.SalesLine) []any { return []any{l.Day, l.CategoryID} }},
	} {
		s, err := db.txStmt(ctx, tx, w.q)
		if err != nil {
			return err
		}
		for _, l := range w.lines {
			args := append(w.key(l), l.Orders, l.Units, l.Revenue, l.CancelledOrders, l.CancelledUnits, l.CancelledRevenue)
			if _, err := s.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("add sales: %w", err)
			}
		}
	}
	return nil
}

const (
	salesSums = `sum(orders) AS o, sum(units) AS u, sum(revenue) AS r,
		sum(cancelled_orders) AS co, sum(cancelled_units) AS cu, sum(cancelled_revenue) AS cr`
	qSalesTotals = `SELECT coalesce(sum(orders), 0), coalesce(sum(units), 0), coalesce(sum(revenue), 0),
		coalesce(sum(cancelled_orders), 0), coalesce(sum(cancelled_units), 0), coalesce(sum(cancelled_revenue), 0)
		FROM sales_days WHERE day BETWEEN ? AND ?`
	qSalesByDay = `SELECT day, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue
		FROM sales_days WHERE day BETWEEN ? AND ? ORDER BY day`
	// The groups by pet or category are ranked before their names are joined, so
	// that only the groups shown are looked up.
	qSalesByPet = `SELECT g.pet_id, coalesce(p.name, a.name, ''), g.o, g.u, g.r, g.co, g.cu, g.cr FROM (
			SELECT pet_id, ` + salesSums + ` FROM sales_daily WHERE day BETWEEN ? AND ?
			GROUP BY pet_id ORDER BY r DESC, u DESC, pet_id LIMIT ?) AS g
		LEFT JOIN pets AS p ON p.id = g.pet_id LEFT JOIN archived_pets AS a ON a.id = g.pet_id
		ORDER BY g.r DESC, g.u DESC, g.pet_id`
	qSalesByCategory = `SELECT g.category_id, coalesce(c.name, ''), g.o, g.u, g.r, g.co, g.cu, g.cr FROM (
			SELECT category_id, ` + salesSums + ` FROM sales_categories WHERE day BETWEEN ? AND ?
			GROUP BY category_id ORDER BY r DESC, u DESC, category_id LIMIT ?) AS g
		LEFT JOIN categories AS c ON c.id = g.category_id
		ORDER BY g.r DESC, g.u DESC, g.category_id`
)

func scanFigures(f *petstore.SalesFigures) []any {
	return []any{&f.Orders, &f.Units, &f.Revenue, &f.CancelledOrders, &f.CancelledUnits, &f.CancelledRevenue}
}

// SalesReport answers q from the sales summaries: the totals and the days from the
// rollup per day (a row a day), the categories from the one per day and category, the
// pets from the one per day and pet (a row per pet sold each day).
func (db *DB) SalesReport(ctx context.Context, q petstore.SalesQuery) (petstore.SalesReport, error) {
	r := petstore.SalesReport{Query: q}
	from, to := petstore.SalesDay(q.From), petstore.SalesDay(q.To)
	s, err := db.readStmt(ctx, qSalesTotals)
	if err != nil {
		return r, fmt.Errorf("sales report: %w", err)
	}
	if err := s.QueryRowContext(ctx, from, to).Scan(scanFigures(&r.Totals)...); err != nil {
		return r, fmt.Errorf("sales report: %w", err)
	}
	var (
		query string
		args  = []any{from, to}
		scan  func(scanner) (petstore.SalesGroup, error)
	)
	switch q.GroupBy {
	case petstore.ByPet:
		query, args = qSalesByPet, append(args, q.Limit)
		scan = func(row scanner) (g petstore.SalesGroup, err error) {
			err = row.Scan(append([]any{&g.PetID, &g.PetName}, scanFigures(&g.SalesFigures)...)...)
			return g, err
		}
	case petstore.ByCategory:
		query, args = qSalesByCategory, append(args, q.Limit)
		scan = func(row scanner) (g petstore.SalesGroup, err error) {
			err = row.Scan(append([]any{&g.CategoryID, &g.CategoryName}, scanFigures(&g.SalesFigures)...)...)
			return g, err
		}
	default:
		query = qSalesByDay
		scan = func(row scanner) (g petstore.SalesGroup, err error) {
			var day string
			if err = row.Scan(append([]any{&day}, scanFigures(&g.SalesFigures)...)...); err != nil {
				return g, err
			}
			g.Day, err = time.Parse(time.DateOnly, day)
			return g, err
		}
	}
	if r.Groups, err = list(ctx, db, "sales report", 0, scan, query, args...); err != nil {
		return r, err
	}
	return r, nil
}
