// The walk-through of the README against a client generated fresh by oapi-codegen
// (types and client, default settings) from the served document: what a consumer in
// Go writes without the SDK. TestConsumerMatrix generates client/client.gen.go beside
// it and runs it; it prints one line per step and exits non-zero on the first surprise.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"walkthrough/client"
)

func main() {
	if err := run(context.Background(), os.Getenv("PETSTORE_URL")); err != nil {
		fmt.Fprintln(os.Stderr, "walkthrough:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base string) error {
	anon, err := client.NewClientWithResponses(base)
	if err != nil {
		return err
	}
	email, password := "walk-"+rand.Text()[:10]+"@example.com", "correct horse battery staple"
	if err := signUp(ctx, anon, email, password); err != nil {
		return err
	}
	c, err := makeKey(ctx, base, anon, email, password)
	if err != nil {
		return err
	}
	for _, step := range []func(context.Context, *client.ClientWithResponses) error{sendMessage, listPets, lookUpBatch, placeOnce, refuseOverStock} {
		if err := step(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// signUp is step 1: sign up.
func signUp(ctx context.Context, anon *client.ClientWithResponses, email, password string) error {
	acct, err := anon.CreateAccountWithResponse(ctx, client.CreateAccountJSONRequestBody{Email: openapi_types.Email(email), Password: password})
	if err != nil {
		return err
	}
	if acct.JSON201 == nil {
		return fmt.Errorf("sign up: %d %s", acct.StatusCode(), acct.Body)
	}
	fmt.Println("signed up as", acct.JSON201.Role)
	return nil
}

// makeKey is step 2: make an API key with HTTP Basic. It returns a client that
// sends the key.
func makeKey(ctx context.Context, base string, anon *client.ClientWithResponses, email, password string) (*client.ClientWithResponses, error) {
	basic := func(_ context.Context, r *http.Request) error {
		r.SetBasicAuth(email, password)
		return nil
	}
	key, err := anon.CreateApiKeyWithResponse(ctx, client.CreateApiKeyJSONRequestBody{Name: "walkthrough"}, basic)
	if err != nil {
		return nil, err
	}
	if key.JSON201 == nil {
		return nil, fmt.Errorf("make a key: %d %s", key.StatusCode(), key.Body)
	}
	bearer := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key.JSON201.Key)
		return nil
	}
	c, err := client.NewClientWithResponses(base, client.WithRequestEditorFn(bearer))
	if err != nil {
		return nil, err
	}
	fmt.Println("made a key")
	return c, nil
}

// sendMessage is step 3: send a message.
func sendMessage(ctx context.Context, c *client.ClientWithResponses) error {
	msg, err := c.SendMessageWithResponse(ctx, client.SendMessageJSONRequestBody{Message: "Hello, pet store!"})
	if err != nil {
		return err
	}
	if msg.JSON201 == nil {
		return fmt.Errorf("send a message: %d %s", msg.StatusCode(), msg.Body)
	}
	fmt.Println("message", msg.JSON201.Status)
	return nil
}

// listPets is step 4: every pet, two at a time, following Link: rel="next"
// (origin-relative).
func listPets(ctx context.Context, c *client.ClientWithResponses) error {
	var names []string
	params := &client.ListPetsParams{Limit: ptr(client.Limit(2))}
	for {
		page, err := c.ListPetsWithResponse(ctx, params)
		if err != nil {
			return err
		}
		if page.JSON200 == nil {
			return fmt.Errorf("list pets: %d %s", page.StatusCode(), page.Body)
		}
		for _, p := range *page.JSON200 {
			names = append(names, p.Name)
		}
		next := nextLink(page.HTTPResponse.Header.Get("Link"))
		if next == "" {
			break
		}
		u, err := page.HTTPResponse.Request.URL.Parse(next)
		if err != nil {
			return err
		}
		cursor := client.Cursor(u.Query().Get("cursor"))
		params.Cursor = &cursor
	}
	fmt.Println("pets:", strings.Join(names, ", "))
	return nil
}

// lookUpBatch is the batch lookup, as generated clients send ids (ids=1&ids=2).
func lookUpBatch(ctx context.Context, c *client.ClientWithResponses) error {
	batch, err := c.ListPetsWithResponse(ctx, &client.ListPetsParams{Ids: &[]int64{1, 2}})
	if err != nil {
		return err
	}
	if batch.JSON200 == nil || len(*batch.JSON200) != 2 {
		return fmt.Errorf("ids=1&ids=2: %d %s", batch.StatusCode(), batch.Body)
	}
	fmt.Println("batch lookup:", (*batch.JSON200)[0].Name, (*batch.JSON200)[1].Name)
	return nil
}

// placeOnce is step 5: one order, sent twice with one Idempotency-Key, is placed
// once.
func placeOnce(ctx context.Context, c *client.ClientWithResponses) error {
	idem := rand.Text()
	var ids []int64
	for range 2 {
		o, err := c.PlaceOrderWithResponse(ctx, &client.PlaceOrderParams{IdempotencyKey: &idem}, client.PlaceOrderJSONRequestBody{PetId: 1, Quantity: 1})
		if err != nil {
			return err
		}
		if o.JSON201 == nil {
			return fmt.Errorf("place an order: %d %s", o.StatusCode(), o.Body)
		}
		ids = append(ids, o.JSON201.Id)
	}
	if ids[0] != ids[1] {
		return fmt.Errorf("one Idempotency-Key placed orders %d and %d", ids[0], ids[1])
	}
	fmt.Println("order placed once")
	return nil
}

// refuseOverStock is step 6: an order of more than the stock is refused; the
// declared 409 comes as a value beside err == nil, so the caller must look.
func refuseOverStock(ctx context.Context, c *client.ClientWithResponses) error {
	big, err := c.PlaceOrderWithResponse(ctx, nil, client.PlaceOrderJSONRequestBody{PetId: 1, Quantity: 100})
	if err != nil {
		return err
	}
	if big.JSON409 == nil {
		return fmt.Errorf("an order over the stock: %d %s", big.StatusCode(), big.Body)
	}
	fmt.Println("refused:", big.JSON409.Code)
	return nil
}

// nextLink returns the target of a Link header's rel="next", or "".
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if ok && strings.Contains(params, `rel="next"`) {
			return strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
