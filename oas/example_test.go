package oas_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
	"github.com/acme-pets/petstore/oas"
)

// This example signs up, makes an API key with the password, and places an order,
// against a real petstore service.
func Example() {
	ctx := context.Background()
	baseURL, stop := startPetstore() // a real service on a temporary database, with one pet
	defer stop()

	// Sign up: no credentials needed.
	public, err := oas.NewClient(baseURL, oas.APIKey(""))
	if err != nil {
		log.Fatal(err)
	}
	_, err = public.CreateAccount(ctx, &oas.NewAccount{Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil {
		log.Fatal(err)
	}

	// Make an API key with the password; the key is shown only once.
	withPassword, _ := oas.NewClient(baseURL, oas.Password{Email: "ada@example.com", Password: "correct horse battery"})
	res, err := withPassword.CreateApiKey(ctx, &oas.NewApiKey{Name: "example"})
	if err != nil {
		log.Fatal(err)
	}
	key := res.(*oas.CreatedApiKey).Key

	// Everything else takes the key.
	client, _ := oas.NewClient(baseURL, oas.APIKey(key))
	pets, err := client.ListPets(ctx, oas.ListPetsParams{Status: oas.NewOptPetStatus(oas.PetStatusAvailable)})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range pets.(*oas.PetsHeaders).Response {
		fmt.Printf("pet %d: %s (%s)\n", p.ID, p.Name, p.Status)
	}

	placed, err := client.PlaceOrder(ctx, &oas.NewOrder{PetId: 1, Quantity: 2}, oas.PlaceOrderParams{IdempotencyKey: oas.NewOptString("example-order-1")})
	if err != nil {
		log.Fatal(err)
	}
	switch r := placed.(type) {
	case *oas.OrderHeaders:
		fmt.Printf("order %d: %d × pet %d, complete=%v, at %s\n", r.Response.ID, r.Response.Quantity, r.Response.PetId, r.Response.Complete, r.Location)
	case *oas.PlaceOrderConflict:
		fmt.Println("refused:", r.Code, r.Message)
	}

	// Errors come back as values of the documented responses.
	refused, _ := client.PlaceOrder(ctx, &oas.NewOrder{PetId: 1, Quantity: 50}, oas.PlaceOrderParams{})
	if c, ok := refused.(*oas.PlaceOrderConflict); ok {
		fmt.Println("refused:", c.Code)
	}
	// Output:
	// pet 1: Rex (available)
	// order 1: 2 × pet 1, complete=false, at /v1/store/orders/1
	// refused: insufficient_stock
}

// startPetstore runs the service on a temporary SQLite database with a pet in stock,
// as `petstore serve --demo` would, and returns its base URL.
func startPetstore() (baseURL string, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "petstore-example")
	if err != nil {
		log.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "petstore.db"))
	if err != nil {
		log.Fatal(err)
	}
	c, _ := st.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	p, _ := st.CreatePet(ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available})
	if _, err := st.SetInventory(ctx, p.ID, 5); err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	h, err := httpapi.New(httpapi.Config{Store: st, ServerURL: base})
	if err != nil {
		log.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	return base + "/v1", func() { srv.Close(); st.Close(); os.RemoveAll(dir) }
}
