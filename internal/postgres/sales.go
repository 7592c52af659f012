package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

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
	err := db.pool.QueryRow(ctx, `SELECT value FROM settings WHERE key = 'currency'`).Scan(&code)
	if errors.Is(err, pgx.ErrNoRows) {
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
// another (petstore.CurrencyChange decides). The settings row is locked first, so
// that processes starting together with different currencies take turns.
func (db *DB) SetCurrency(ctx context.Context, code string) error {
	// The usual start names the currency the database holds: that writes nothing.
	if err := db.loadCurrency(ctx); err != nil {
		return err
	}
	if c := db.currency.Load(); c != nil && *c == code {
		return nil
	}
	err := db.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES ('currency', '') ON CONFLICT (key) DO NOTHING`); err != nil {
			return err
		}
		var (
			stored string
			orders bool
		)
		if err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE key = 'currency' FOR UPDATE`).Scan(&stored); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM orders WHERE unit_price IS NOT NULL)`).Scan(&orders); err != nil {
			return err
		}
		if err := petstore.CurrencyChange(stored, code, orders); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE settings SET value = $1 WHERE key = 'currency'`, code)
		return err
	})
	if err != nil {
		return fmt.Errorf("set currency: %w", err)
	}
	db.currency.Store(&code)
	return nil
}

// The sales summaries are written by every batch and cancel. Their rows per day and
// per day and category are shared by every pet, so on PostgreSQL, where batches of
// several placement loops and processes commit side by side, each of those rows is
// split in salesStripes stripes and a transaction adds to one chosen at random: two
// transactions wait for each other on a row only when they chose the same stripe,
// instead of every batch of the day queueing on one row through its commit. A report
// sums the stripes. The rows per day and pet need no stripes: a pet's orders are one
// placement loop's, and they lock the pet anyway.
const salesStripes = 16

// The three statements that add lines (petstore.SalesLine, given as arrays: one line
// per key, as one INSERT may not change a row twice), sent in this order, each taking
// its rows' locks in key order, so that two transactions cannot wait for each other in
// a circle.
const (
	qAddSalesDays = `INSERT INTO sales_days AS s (day, stripe, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		SELECT day, $1::smallint, o, u, r, co, cu, cr
		FROM unnest($2::date[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[]) AS l (day, o, u, r, co, cu, cr)
		ORDER BY day
		ON CONFLICT (day, stripe) DO UPDATE SET ` + addFigures
	qAddSalesCategories = `INSERT INTO sales_categories AS s (day, category_id, stripe, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		SELECT day, category_id, $1::smallint, o, u, r, co, cu, cr
		FROM unnest($2::date[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])
			AS l (day, category_id, o, u, r, co, cu, cr)
		ORDER BY day, category_id
		ON CONFLICT (day, category_id, stripe) DO UPDATE SET ` + addFigures
	qAddSalesDaily = `INSERT INTO sales_daily AS s (day, pet_id, category_id, orders, units, revenue, cancelled_orders, cancelled_units, cancelled_revenue)
		SELECT * FROM unnest($1::date[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[],
			$7::bigint[], $8::bigint[], $9::bigint[]) AS l (day, pet_id, category_id, o, u, r, co, cu, cr)
		ORDER BY day, pet_id, category_id
		ON CONFLICT (day, pet_id, category_id) DO UPDATE SET ` + addFigures
	addFigures = `orders = s.orders + excluded.orders, units = s.units + excluded.units, revenue = s.revenue + excluded.revenue,
		cancelled_orders = s.cancelled_orders + excluded.cancelled_orders,
		cancelled_units = s.cancelled_units + excluded.cancelled_units,
		cancelled_revenue = s.cancelled_revenue + excluded.cancelled_revenue`
)

// salesWrites are the statements and arguments that add lines to the summaries.
func salesWrites(lines []petstore.SalesLine) [][]any {
	if len(lines) == 0 {
		return nil
	}
	r := petstore.Rollup(lines)
	stripe := rand.IntN(salesStripes)
	return [][]any{
		append([]any{qAddSalesDays, stripe}, salesArgs(r.Days, false, false)...),
		append([]any{qAddSalesCategories, stripe}, salesArgs(r.Categories, false, true)...),
		append([]any{qAddSalesDaily}, salesArgs(lines, true, true)...),
	}
}

// salesArgs are the arrays of a line's day, its pet and category when asked, and its
// figures.
func salesArgs(lines []petstore.SalesLine, pet, cat bool) []any {
	n := len(lines)
	days := make([]string, n)
	pets, cats := make([]int64, n), make([]int64, n)
	var f [6][]int64
	for i := range f {
		f[i] = make([]int64, n)
	}
	for i, l := range lines {
		days[i], pets[i], cats[i] = l.Day, l.PetID, l.CategoryID
		f[0][i], f[1][i], f[2][i] = l.Orders, l.Units, l.Revenue
		f[3][i], f[4][i], f[5][i] = l.CancelledOrders, l.CancelledUnits, l.CancelledRevenue
	}
	args := []any{days}
	if pet {
		args = append(args, pets)
	}
	if cat {
		args = append(args, cats)
	}
	return append(args, f[0], f[1], f[2], f[3], f[4], f[5])
}

// queueSales adds the lines of a batch to its writes.
func queueSales(w *pgx.Batch, lines []petstore.SalesLine) {
	for _, q := range salesWrites(lines) {
		w.Queue(q[0].(string), q[1:]...)
	}
}

// addSales adds lines to the summaries inside tx.
func addSales(ctx context.Context, tx pgx.Tx, lines []petstore.SalesLine) error {
	for _, q := range salesWrites(lines) {
		if _, err := tx.Exec(ctx, q[0].(string), q[1:]...); err != nil {
			return fmt.Errorf("add sales: %w", err)
		}
	}
	return nil
}

const (
	// sum of bigint is numeric in PostgreSQL: each is cast back.
	salesSums = `sum(orders)::bigint AS o, sum(units)::bigint AS u, sum(revenue)::bigint AS r,
		sum(cancelled_orders)::bigint AS co, sum(cancelled_units)::bigint AS cu, sum(cancelled_revenue)::bigint AS cr`
	qSalesTotals = `SELECT coalesce(sum(orders), 0)::bigint, coalesce(sum(units), 0)::bigint, coalesce(sum(revenue), 0)::bigint,
		coalesce(sum(cancelled_orders), 0)::bigint, coalesce(sum(cancelled_units), 0)::bigint,
		coalesce(sum(cancelled_revenue), 0)::bigint
		FROM sales_days WHERE day BETWEEN $1::date AND $2::date`
	qSalesByDay = `SELECT day, ` + salesSums + ` FROM sales_days WHERE day BETWEEN $1::date AND $2::date GROUP BY day ORDER BY day`
	qSalesByPet = `SELECT g.pet_id, coalesce(p.name, a.name, ''), g.o, g.u, g.r, g.co, g.cu, g.cr FROM (
			SELECT pet_id, ` + salesSums + ` FROM sales_daily WHERE day BETWEEN $1::date AND $2::date
			GROUP BY pet_id ORDER BY r DESC, u DESC, pet_id LIMIT $3) AS g
		LEFT JOIN pets AS p ON p.id = g.pet_id LEFT JOIN archived_pets AS a ON a.id = g.pet_id
		ORDER BY g.r DESC, g.u DESC, g.pet_id`
	qSalesByCategory = `SELECT g.category_id, coalesce(c.name, ''), g.o, g.u, g.r, g.co, g.cu, g.cr FROM (
			SELECT category_id, ` + salesSums + ` FROM sales_categories WHERE day BETWEEN $1::date AND $2::date
			GROUP BY category_id ORDER BY r DESC, u DESC, category_id LIMIT $3) AS g
		LEFT JOIN categories AS c ON c.id = g.category_id
		ORDER BY g.r DESC, g.u DESC, g.category_id`
)

func scanFigures(f *petstore.SalesFigures) []any {
	return []any{&f.Orders, &f.Units, &f.Revenue, &f.CancelledOrders, &f.CancelledUnits, &f.CancelledRevenue}
}

// SalesReport answers q from the sales summaries, as SQLite's does (see there).
func (db *DB) SalesReport(ctx context.Context, q petstore.SalesQuery) (petstore.SalesReport, error) {
	r := petstore.SalesReport{Query: q}
	from, to := q.From.UTC(), q.To.UTC()
	if err := db.pool.QueryRow(ctx, qSalesTotals, from, to).Scan(scanFigures(&r.Totals)...); err != nil {
		return r, fmt.Errorf("sales report: %w", err)
	}
	var (
		query string
		args  = []any{from, to}
		scan  func(pgx.Row) (petstore.SalesGroup, error)
	)
	switch q.GroupBy {
	case petstore.ByPet:
		query, args = qSalesByPet, append(args, q.Limit)
		scan = func(row pgx.Row) (g petstore.SalesGroup, err error) {
			err = row.Scan(append([]any{&g.PetID, &g.PetName}, scanFigures(&g.SalesFigures)...)...)
			return g, err
		}
	case petstore.ByCategory:
		query, args = qSalesByCategory, append(args, q.Limit)
		scan = func(row pgx.Row) (g petstore.SalesGroup, err error) {
			err = row.Scan(append([]any{&g.CategoryID, &g.CategoryName}, scanFigures(&g.SalesFigures)...)...)
			return g, err
		}
	default:
		query = qSalesByDay
		scan = func(row pgx.Row) (g petstore.SalesGroup, err error) {
			var day time.Time
			err = row.Scan(append([]any{&day}, scanFigures(&g.SalesFigures)...)...)
			g.Day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
			return g, err
		}
	}
	groups, err := list(ctx, db, "sales report", 0, scan, query, args...)
	if err != nil {
		return r, err
	}
	r.Groups = groups
	return r, nil
}
