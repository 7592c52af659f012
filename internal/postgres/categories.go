package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Category names are unique in any letter case, through name_lower as for emails.

func categoryNameTaken(name string) error {
	return petstore.CategoryNameTaken(name)
}

func categoryInUse(id int64) error {
	return petstore.CategoryInUse(id)
}

// CreateCategory validates and adds a category; a name already used in any letter case
// is EConflict.
func (db *DB) CreateCategory(ctx context.Context, c petstore.Category) (petstore.Category, error) {
	if err := c.Validate(); err != nil {
		return petstore.Category{}, err
	}
	err := db.pool.QueryRow(ctx,
		`INSERT INTO categories (name, name_lower, description) VALUES ($1, $2, $3) RETURNING id`,
		c.Name, petstore.NameKey(c.Name), c.Description,
	).Scan(&c.ID)
	switch {
	case isUnique(err):
		return petstore.Category{}, categoryNameTaken(c.Name)
	case err != nil:
		return petstore.Category{}, fmt.Errorf("create category: %w", err)
	}
	return c, nil
}

// Category finds a category by id.
func (db *DB) Category(ctx context.Context, id int64) (petstore.Category, error) {
	c := petstore.Category{ID: id}
	err := db.pool.QueryRow(ctx,
		`SELECT name, description FROM categories WHERE id = $1`, id,
	).Scan(&c.Name, &c.Description)
	if noRows(err) {
		return petstore.Category{}, petstore.NotFound("Category", id)
	}
	if err != nil {
		return petstore.Category{}, fmt.Errorf("category: %w", err)
	}
	return c, nil
}

const qCategories = `SELECT id, name, description FROM categories WHERE id > $1 ORDER BY id LIMIT $2`

// Categories lists one page of categories by id.
func (db *DB) Categories(ctx context.Context, p petstore.Page) ([]petstore.Category, error) {
	return list(ctx, db, "categories", 0, scanCategory, qCategories, p.After, p.Size())
}

func scanCategory(row pgx.Row) (petstore.Category, error) {
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
	tag, err := db.pool.Exec(ctx,
		`UPDATE categories SET name = $1, name_lower = $2, description = $3 WHERE id = $4 AND (NOT $5 OR name = $1)`,
		c.Name, petstore.NameKey(c.Name), c.Description, c.ID, keepName)
	switch {
	case isUnique(err):
		return petstore.Category{}, categoryNameTaken(c.Name)
	case err != nil:
		return petstore.Category{}, fmt.Errorf("replace category: %w", err)
	case tag.RowsAffected() == 0 && keepName:
		if _, err := db.Category(ctx, c.ID); err == nil {
			return petstore.Category{}, invalid // a new name, held to the policy
		}
		return petstore.Category{}, petstore.NotFound("Category", c.ID)
	case tag.RowsAffected() == 0:
		return petstore.Category{}, petstore.NotFound("Category", c.ID)
	}
	return c, nil
}

// DeleteCategory removes a category; one that pets use is EConflict. The foreign key
// of pets (ON DELETE RESTRICT) decides, so a pet created at the same moment in
// another process cannot be left without its category.
func (db *DB) DeleteCategory(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM categories WHERE id = $1`, id)
	switch {
	case isForeignKey(err):
		return categoryInUse(id)
	case err != nil:
		return fmt.Errorf("delete category: %w", err)
	case tag.RowsAffected() == 0:
		return petstore.NotFound("Category", id)
	}
	return nil
}
