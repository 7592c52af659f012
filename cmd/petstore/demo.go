package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"log/slog"

	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/media/photo"
	"github.com/acme-pets/petstore/internal/petstore"
)

type demoPet struct {
	name        string
	stock       int
	price       int64 // in the currency's minor unit
	description string
	tags        []string
	colour      color.RGBA // of its drawn photo
}

// demoCatalog is the sample data of --demo: pet 1 is Rex, a dog with 5 in stock at
// 349.00.
var demoCatalog = []struct {
	category petstore.Category
	pets     []demoPet
}{
	{petstore.Category{Name: "Dogs", Description: "Loyal companions."}, []demoPet{
		{"Rex", 5, 34900, "A calm beagle who loves long walks.", []string{"calm", "house-trained"}, color.RGBA{196, 140, 84, 255}},
		{"Bella", 3, 29900, "A playful terrier, good with children.", []string{"playful", "small"}, color.RGBA{230, 200, 150, 255}},
		{"Max", 0, 32500, "A gentle giant.", []string{"calm", "large"}, color.RGBA{90, 70, 60, 255}},
	}},
	{petstore.Category{Name: "Cats", Description: "Independent spirits."}, []demoPet{
		{"Luna", 4, 12000, "A quiet grey cat who likes windowsills.", []string{"calm", "indoor"}, color.RGBA{150, 150, 160, 255}},
		{"Milo", 2, 9900, "A curious ginger kitten.", []string{"playful", "small"}, color.RGBA{235, 150, 60, 255}},
	}},
	{petstore.Category{Name: "Birds", Description: "Songs included."}, []demoPet{
		{"Kiwi", 10, 4500, "A budgie that sings in the morning.", []string{"small"}, color.RGBA{120, 200, 90, 255}},
	}},
}

// fillDemo adds the sample catalog when the database has no categories yet, each pet
// with a drawn photo when files keeps photos (it may be nil).
func fillDemo(ctx context.Context, st petstore.Store, files media.Store, log *slog.Logger) error {
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
			pet, err := st.CreatePet(ctx, petstore.PetFields{Name: p.name, CategoryID: c.ID, Status: petstore.Available, Price: &p.price,
				Description: p.description, Tags: p.tags})
			if err != nil {
				return err
			}
			if files != nil {
				if err := addDemoPhoto(ctx, st, files, pet.ID, p.colour); err != nil {
					return err
				}
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

// addDemoPhoto draws a photo of a pet (a round shape of its colour on a pale
// background: a placeholder, not a portrait) and adds it as an upload would be.
func addDemoPhoto(ctx context.Context, st petstore.Store, files media.Store, petID int64, c color.RGBA) error {
	const w, h = 800, 600
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			dx, dy := x-w/2, y-h/2
			px := color.RGBA{245, 240, 232, 255}
			if dx*dx+dy*dy < 220*220 {
				px = c
			}
			img.SetRGBA(x, y, px)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	made, err := photo.NewProcessor(1).Process(ctx, photo.PNG, buf.Bytes())
	if err != nil {
		return err
	}
	p, err := media.PutPhoto(ctx, files, made)
	if err != nil {
		return err
	}
	_, err = st.AddPetPhoto(ctx, petID, p)
	return err
}
