package main

import (
	"context"
	"log/slog"

	"github.com/acme-pets/petstore/internal/petstore"
)

type demoPet struct {
	name  string
	stock int
	price int64 // in the currency's minor unit
}

// demoCatalog is the sample data of --demo: pet 1 is Rex, a dog with 5 in stock at
// 349.00.
var demoCatalog = []struct {
	category petstore.Category
	pets     []demoPet
}{
	{petstore.Category{Name: "Dogs", Description: "Loyal companions."}, []demoPet{{"Rex", 5, 34900}, {"Bella", 3, 29900}, {"Max", 0, 32500}}},
	{petstore.Category{Name: "Cats", Description: "Independent spirits."}, []demoPet{{"Luna", 4, 12000}, {"Milo", 2, 9900}}},
	{petstore.Category{Name: "Birds", Description: "Songs included."}, []demoPet{{"Kiwi", 10, 4500}}},
}

// fillDemo adds the sample catalog when the database has no categories yet.
func fillDemo(ctx context.Context, st petstore.Store, log *slog.Logger) error {
	cats, err := st.Categories(ctx, petstore.Page{Limit: 1})
	if err != nil || len(cats) > 0 {
		return err
	}
	pets := 0
	for _, d := range demoCatalog {
		c, err := st.CreateCategory(ctx, d.category)
		if err != nil {
			return err
		}
		for _, p := range d.pets {
			pet, err := st.CreatePet(ctx, petstore.PetFields{Name: p.name, CategoryID: c.ID, Status: petstore.Available, Price: &p.price})
			if err != nil {
				return err
			}
			if _, err := st.SetInventory(ctx, pet.ID, p.stock); err != nil {
				return err
			}
			pets++
		}
	}
	log.Info("demo data added", "categories", len(demoCatalog), "pets", pets)
	return nil
}
