package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Category names are unique in any letter case, through name_lower as for emails.

func categoryNameTaken(name string) error {
	return petstore.CategoryNameTaken(name)
}

// CreateCategory validates and adds a category; a name already used in any letter case
// is EConflict.
func (db *DB) CreateCategory(ctx context.Context, c petstore.Category) (petstore.Category, error) {
	if err := c.Validate(); err != nil {
		return petstore.Category{}, err
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx,
			`INSERT INTO categories (name, name_lower, description) VALUES (?, ?, ?) RETURNING id`,
			c.Name, petstore.NameKey(c.Name), c.Description,
		).Scan(&c.ID)
	})
	if isUnique(err) {
		return petstore.Category{}, categoryNameTaken(c.Name)
	}
	if err != nil {
		return petstore.Category{}, fmt.Errorf("create category: %w", err)
	}
	return c, nil
}

// Category finds a category by id.
func (db *DB) Category(ctx context.Context, id int64) (petstore.Category, error) {
	c := petstore.Category{ID: id}
	err := db.read.QueryRowContext(ctx,
		`SELECT name, description FROM categories WHERE id = ?`, id,
	).Scan(&c.Name, &c.Description)
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Category{}, petstore.NotFound("Category", id)
	}
	if err != nil {
		return petstore.Category{}, fmt.Errorf("category: %w", err)
	}
	return c, nil
}

const qCategories = `SELECT id, name, description FROM categories WHERE id > ? ORDER BY id LIMIT ?`

// Categories lists one page of categories by id.
func (db *DB) Categories(ctx context.Context, p petstore.Page) ([]petstore.Category, error) {
	return list(uncancelled(ctx), db, "categories", 0, scanCategory, qCategories, p.After, p.Size())
}

func scanCategory(row scanner) (petstore.Category, error) {
	var c petstore.Category
	err := row.Scan(&c.ID, &c.Name, &c.Description)
	return c, err
}

// ReplaceCategory validates c and replaces the category with its id; a name another
// category uses in any letter case is EConflict. A name stored before the text
// policy refused it may be kept as it is (Category.ValidateReplacing).
func (db *DB) ReplaceCategory(ctx context.Context, c petstore.Category) (petstore.Category, error) {
	keepName, invalid := c.ValidateReplacing()
	if invalid != nil && !keepName {
		return petstore.Category{}, invalid
	}
	var n int64
	err := db.update(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE categories SET name = ?, name_lower = ?, description = ? WHERE id = ? AND (NOT ? OR name = ?)`,
			c.Name, petstore.NameKey(c.Name), c.Description, c.ID, keepName, c.Name)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if isUnique(err) {
		return petstore.Category{}, categoryNameTaken(c.Name)
	}
	if err != nil {
		return petstore.Category{}, fmt.Errorf("replace category: %w", err)
	}
	if n == 0 {
		if keepName {
			if _, err := db.Category(ctx, c.ID); err == nil {
				return petstore.Category{}, invalid // a new name, held to the policy
			}
		}
		return petstore.Category{}, petstore.NotFound("Category", c.ID)
	}
	return c, nil
}

// DeleteCategory removes a category; one that pets use is EConflict.
func (db *DB) DeleteCategory(ctx context.Context, id int64) error {
	err := db.update(ctx, func(tx *sql.Tx) error {
		var exists, used bool
		err := tx.QueryRowContext(ctx,
			`SELECT EXISTS (SELECT 1 FROM categories WHERE id = ?),
			        EXISTS (SELECT 1 FROM pets WHERE category_id = ?)`, id, id,
		).Scan(&exists, &used)
		switch {
		case err != nil:
			return err
		case !exists:
			return petstore.NotFound("Category", id)
		case used:
			return categoryInUse(id)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM categories WHERE id = ?`, id)
		if isForeignKey(err) {
			return categoryInUse(id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete category: %w", err)
	}
	return nil
}

func categoryInUse(id int64) error {
	return petstore.CategoryInUse(id)
}
