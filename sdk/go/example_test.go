package petstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// The walk-through: sign up, make an API key with the password, send the first message,
// page through the pets, place an order that is safe to send twice, and handle a
// refused one. PETSTORE_URL is the API's address, such as http://localhost:8080/v1.
func Example() {
	ctx := context.Background()
	baseURL := os.Getenv("PETSTORE_URL")

	// Signing up takes no credentials. (A new address on every run: one is taken once.)
	client, err := petstore.NewClient(baseURL)
	if err != nil {
		log.Fatal(err)
	}
	email, password := fmt.Sprintf("ada+%d@example.com", time.Now().UnixNano()), "correct horse battery staple"
	account, err := client.CreateAccount(ctx, petstore.NewAccount{Email: email, Password: password})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("signed up as", account.Role)

	// The password makes an API key, shown this once; every other call takes the key.
	created, err := client.WithPassword(email, password).CreateAPIKey(ctx, petstore.NewAPIKey{Name: "laptop"})
	if err != nil {
		log.Fatal(err)
	}
	client, err = petstore.NewClient(baseURL, petstore.WithAPIKey(created.Key))
	if err != nil {
		log.Fatal(err)
	}
	msg, err := client.SendMessage(ctx, petstore.NewMessage{Message: "Hello, pet store!"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("message", msg.Status)

	// The loop fetches the pages, two pets at a time, as it goes.
	for pet, err := range client.ListPets(ctx, &petstore.ListPetsOptions{Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pet.Name, pet.Status)
	}

	// With the same Idempotency-Key, a second attempt (after a crash, say) gets the first
	// order back instead of placing another.
	order := petstore.NewOrder{PetID: 6, Quantity: 1, IdempotencyKey: "first-order-of-" + email} // one Kiwi
	first, err := client.PlaceOrder(ctx, order)
	if err != nil {
		log.Fatal(err)
	}
	again, err := client.PlaceOrder(ctx, order)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("placed once:", first.ID == again.ID)

	// A refusal is a *petstore.Error; branch on its Code.
	_, err = client.PlaceOrder(ctx, petstore.NewOrder{PetID: 1, Quantity: 50}) // Rex: 5 in stock
	var apiErr *petstore.Error
	if errors.As(err, &apiErr) && apiErr.Code == petstore.CodeInsufficientStock {
		fmt.Println("refused:", apiErr.Status, apiErr.Code)
	}
	// Output:
	// signed up as customer
	// message queued
	// Rex available
	// Bella available
	// Max sold
	// Luna available
	// Milo available
	// Kiwi available
	// placed once: true
	// refused: 409 insufficient_stock
}

// GetCurrentAccount tells whose key the client holds, and with which role: here, the
// admin's key of PETSTORE_ADMIN_KEY.
func ExampleClient_GetCurrentAccount() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_ADMIN_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	account, err := client.GetCurrentAccount(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(account.Email, account.Role == petstore.RoleAdmin)
	// Output:
	// admin@example.com true
}

// Filters combine: here, the dogs (category 1) that are for sale.
func ExampleClient_ListPets() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	opts := &petstore.ListPetsOptions{CategoryID: 1, Status: petstore.PetStatusAvailable}
	for pet, err := range client.ListPets(ctx, opts) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pet.Name)
	}
	// Output:
	// Rex
	// Bella
}

// A page at a time: the program shows one page and keeps its Next; a later run passes
// it back as the Cursor of the same options and goes on from there.
func ExampleClient_ListPetsPages() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	stored := "" // the start; keep it in a database, a file, a URL
	for range 2 {
		opts := &petstore.ListPetsOptions{CategoryID: 1, Limit: 1, Cursor: stored}
		for page, err := range client.ListPetsPages(ctx, opts) {
			if err != nil {
				log.Fatal(err)
			}
			for _, pet := range page.Items {
				fmt.Println(pet.Name)
			}
			stored = page.Next // "" after the last page
			break              // one page per run
		}
	}
	// Output:
	// Rex
	// Bella
}

// WithResponse hands over the answer: here, the request id and the rate limit left
// after a call, to log beside its result.
func ExampleWithResponse() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	var res petstore.Response
	account, err := client.GetCurrentAccount(ctx, petstore.WithResponse(&res))
	if err != nil {
		log.Fatal(err)
	}
	limit, ok := res.RateLimit("default")
	fmt.Println(account.Role, res.StatusCode, res.RequestID != "", ok && limit.Remaining < limit.Quota)
	// Output:
	// customer 200 true true
}

// IDs is the batch lookup: ids that match no pet are left out.
func ExampleListPetsOptions_iDs() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	for pet, err := range client.ListPets(ctx, &petstore.ListPetsOptions{IDs: []int64{1, 4, 999}}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pet.ID, pet.Name)
	}
	// Output:
	// 1 Rex
	// 4 Luna
}

// Name finds pets by a part of their name, without regard to case.
func ExampleListPetsOptions_name() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	for pet, err := range client.ListPets(ctx, &petstore.ListPetsOptions{Name: "LU"}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pet.ID, pet.Name)
	}
	// Output:
	// 4 Luna
}

// IDs asks for the stock of these pets only.
func ExampleListInventoryOptions_iDs() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	for item, err := range client.ListInventory(ctx, &petstore.ListInventoryOptions{IDs: []int64{5, 2, 999}}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(item.PetID, item.Quantity, item.Status)
	}
	// Output:
	// 2 3 available
	// 5 2 available
}

// A refused request says what is wrong with which field.
func ExampleError() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.PlaceOrder(ctx, petstore.NewOrder{PetID: 1, Quantity: 1000})

	var apiErr *petstore.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code)
		for _, d := range apiErr.Details {
			fmt.Printf("%s: %s\n", d.Field, d.Problem)
		}
	}
	// Output:
	// 400 validation_failed
	// quantity: must be at most 100
}

// A deprecated operation announces its sunset and successor on every answer. By default
// the client logs that once per operation; a handler can do something else with it.
func ExampleWithDeprecationHandler() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"),
		petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")),
		petstore.WithDeprecationHandler(func(d petstore.Deprecation) {
			fmt.Printf("%s is deprecated; use %s\n", d.Operation, d.Successor.RequestURI())
		}))
	if err != nil {
		log.Fatal(err)
	}
	pet, err := client.GetPet(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pet.Name)
	// Output:
	// getPetById is deprecated; use /v1/pets?ids=1
	// Rex
}

// A webhook receiver trusts a delivery only once ConstructEvent has checked its
// signature, on the raw body, with the endpoint's secret; it answers 2xx quickly and
// drops an event it has handled (a delivery may come more than once). Here the receiver
// runs on this machine (the service under test allows private addresses), and a test
// event shows that it works.
func ExampleConstructEvent() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_ADMIN_KEY")))
	if err != nil {
		log.Fatal(err)
	}

	// The receiver's address first: the endpoint's secret is part of its configuration.
	receiver := httptest.NewUnstartedServer(nil)
	defer receiver.Close()
	hook, err := client.CreateWebhook(ctx, petstore.NewWebhook{
		URL:    "http://" + receiver.Listener.Addr().String() + "/petstore-events",
		Events: []petstore.EventType{petstore.EventTypeOrderPlaced, petstore.EventTypePetSoldOut},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.DeleteWebhook(ctx, hook.ID)
	secret := hook.Secret // shown this once: keep it where the receiver can read it

	handled := make(chan *petstore.Event, 1)
	var mu sync.Mutex
	seen := map[string]bool{}
	receiver.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		event, err := petstore.ConstructEvent(payload, r.Header.Get(petstore.SignatureHeader), secret)
		if err != nil {
			http.Error(w, "not signed by the pet store", http.StatusBadRequest)
			return
		}
		mu.Lock()
		repeat := seen[event.ID]
		seen[event.ID] = true
		mu.Unlock()
		if !repeat {
			handled <- event // a real receiver queues it, or handles it by event.Type
		}
		w.WriteHeader(http.StatusNoContent)
	})
	receiver.Start()

	delivery, err := client.SendTestEvent(ctx, hook.ID)
	if err != nil {
		log.Fatal(err)
	}
	event := <-handled
	fmt.Println(event.Type, event.ID == delivery.EventID, event.Webhook.ID == hook.ID)
	// Output:
	// webhook.test true true
}

// A leaked secret is revoked at once with an overlap of 0; the default overlap of 24
// hours lets the receiver switch to the new secret at its own pace instead.
func ExampleClient_RotateWebhookSecret() {
	ctx := context.Background()
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_ADMIN_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	hook, err := client.CreateWebhook(ctx, petstore.NewWebhook{
		URL: "https://shop.example.com/petstore-events", Events: []petstore.EventType{petstore.EventTypeAll},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.DeleteWebhook(ctx, hook.ID)

	rotated, err := client.RotateWebhookSecret(ctx, hook.ID, petstore.SecretRotation{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("old secret signs for", rotated.PreviousSecretExpiresAt.Sub(rotated.UpdatedAt).Round(time.Hour))

	revoked, err := client.RotateWebhookSecret(ctx, hook.ID, petstore.SecretRotation{Overlap: petstore.Ptr(time.Duration(0))})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("new secret:", revoked.Secret != rotated.Secret, "old one signs:", !revoked.PreviousSecretExpiresAt.IsZero())
	// Output:
	// old secret signs for 24h0m0s
	// new secret: true old one signs: false
}

// A least-privilege key: a storefront that only shows the catalogue gets a key limited
// to pets:read, which expires in 90 days. A call outside its scopes is refused with
// CodeInsufficientScope, and the Error names the scope the call needed.
func ExampleClient_CreateAPIKey() {
	ctx := context.Background()
	baseURL := os.Getenv("PETSTORE_URL")
	client, err := petstore.NewClient(baseURL, petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	created, err := client.CreateAPIKey(ctx, petstore.NewAPIKey{
		Name:      "storefront",
		Scopes:    []petstore.Scope{petstore.ScopePetsRead},
		ExpiresAt: time.Now().Add(90 * 24 * time.Hour),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.RevokeAPIKey(ctx, created.ID)
	fmt.Println(created.Scopes, "for", created.ExpiresAt.Sub(created.CreatedAt).Round(24*time.Hour))

	storefront, err := petstore.NewClient(baseURL, petstore.WithAPIKey(created.Key))
	if err != nil {
		log.Fatal(err)
	}
	for page, err := range storefront.ListPetsPages(ctx, &petstore.ListPetsOptions{Limit: 1}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("pets:", len(page.Items))
		break
	}

	_, err = storefront.PlaceOrder(ctx, petstore.NewOrder{PetID: 1, Quantity: 1})
	var apiErr *petstore.Error
	if errors.As(err, &apiErr) && apiErr.Code == petstore.CodeInsufficientScope {
		fmt.Println("refused:", apiErr.Status, apiErr.Code, "needs", apiErr.Scope)
	}
	// Output:
	// [pets:read] for 2160h0m0s
	// pets: 1
	// refused: 403 insufficient_scope needs orders:write
}
