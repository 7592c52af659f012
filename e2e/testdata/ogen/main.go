// The walk-through of the README against a client generated fresh by ogen (the client
// only, without OpenTelemetry) from the served document: what a consumer in Go that
// prefers ogen writes. TestConsumerMatrix generates client/ beside it and runs it; it
// prints one line per step and exits non-zero on the first surprise.
//
// createApiKey accepts HTTP Basic or a key (security: basicAuth, or bearerAuth). An ogen
// client asks its SecuritySource for every scheme an operation names, in the
// document's order, and each one it gets sets Authorization: the last wins. A source
// that answers BearerAuth with an empty token therefore sends "Bearer " over the Basic
// credentials (a 401). The source below answers ogenerrors.ErrSkipClientSecurity for
// what it does not hold, which is the recipe the README gives.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/ogen-go/ogen/ogenerrors"

	"walkthrough/client"
)

func main() {
	if err := run(context.Background(), os.Getenv("PETSTORE_URL")); err != nil {
		fmt.Fprintln(os.Stderr, "walkthrough:", err)
		os.Exit(1)
	}
}

// credentials is a SecuritySource: HTTP Basic when it has an email, a key when it has
// one, and ErrSkipClientSecurity for a scheme it has nothing for.
type credentials struct {
	email, password, key string
}

func (c *credentials) BasicAuth(context.Context, client.OperationName) (client.BasicAuth, error) {
	if c.email == "" {
		return client.BasicAuth{}, ogenerrors.ErrSkipClientSecurity
	}
	return client.BasicAuth{Username: c.email, Password: c.password}, nil
}

func (c *credentials) BearerAuth(context.Context, client.OperationName) (client.BearerAuth, error) {
	if c.key == "" {
		return client.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
	}
	return client.BearerAuth{Token: c.key}, nil
}

// naive is the SecuritySource a newcomer writes first: it answers every scheme.
type naive struct{ credentials }

func (n *naive) BearerAuth(context.Context, client.OperationName) (client.BearerAuth, error) {
	return client.BearerAuth{Token: n.key}, nil
}

func run(ctx context.Context, base string) error {
	baseURL, err := url.Parse(base)
	if err != nil {
		return err
	}
	creds := &credentials{email: "walk-" + rand.Text()[:10] + "@example.com", password: "correct horse battery staple"}
	c, err := client.NewClient(base, creds)
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { return signUp(ctx, c, creds) },
		func() error { return showNaive(ctx, base, creds) },
		func() error { return makeKey(ctx, c, creds) },
		func() error { return sendMessage(ctx, c) },
		func() error { return listPets(ctx, c, baseURL) },
		func() error { return lookUpBatch(ctx, c) },
		func() error { return placeOnce(ctx, c) },
		func() error { return refuseOverStock(ctx, c) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// signUp is step 1: sign up (security: [], so the source is not asked).
func signUp(ctx context.Context, c *client.Client, creds *credentials) error {
	res, err := c.CreateAccount(ctx, &client.NewAccount{Email: creds.email, Password: creds.password})
	if err != nil {
		return err
	}
	acct, ok := res.(*client.AccountHeaders)
	if !ok {
		return fmt.Errorf("sign up: %T %+v", res, res)
	}
	fmt.Println("signed up as", acct.Response.Role)
	return nil
}

// showNaive shows the trap: a source that answers BearerAuth with no key sends an
// empty Bearer over the Basic credentials.
func showNaive(ctx context.Context, base string, creds *credentials) error {
	nc, err := client.NewClient(base, &naive{*creds})
	if err != nil {
		return err
	}
	if res, err := nc.CreateApiKey(ctx, &client.NewApiKey{Name: "naive"}); err != nil {
		return err
	} else if _, ok := res.(*client.UnauthorizedHeaders); ok {
		fmt.Println("a source without ErrSkipClientSecurity: 401")
	} else {
		fmt.Printf("a source without ErrSkipClientSecurity: %T\n", res)
	}
	return nil
}

// makeKey is step 2: make an API key with HTTP Basic; from then on the key, and
// Basic no more.
func makeKey(ctx context.Context, c *client.Client, creds *credentials) error {
	res, err := c.CreateApiKey(ctx, &client.NewApiKey{Name: "walkthrough"})
	if err != nil {
		return err
	}
	key, ok := res.(*client.CreatedApiKeyHeaders)
	if !ok {
		return fmt.Errorf("make a key: %T %+v", res, res)
	}
	creds.email, creds.password, creds.key = "", "", key.Response.Key
	fmt.Println("made a key")
	return nil
}

// sendMessage is step 3: send a message.
func sendMessage(ctx context.Context, c *client.Client) error {
	res, err := c.SendMessage(ctx, &client.NewMessage{Message: "Hello, pet store!"})
	if err != nil {
		return err
	}
	msg, ok := res.(*client.MessageHeaders)
	if !ok {
		return fmt.Errorf("send a message: %T %+v", res, res)
	}
	fmt.Println("message", msg.Response.Status)
	return nil
}

// listPets is step 4: every pet, two at a time, following Link: rel="next"
// (origin-relative, so resolved against the base URL).
func listPets(ctx context.Context, c *client.Client, baseURL *url.URL) error {
	var names []string
	params := client.ListPetsParams{Limit: client.NewOptInt32(2)}
	for {
		res, err := c.ListPets(ctx, params)
		if err != nil {
			return err
		}
		page, ok := res.(*client.PetsHeaders)
		if !ok {
			return fmt.Errorf("list pets: %T %+v", res, res)
		}
		for _, p := range page.Response {
			names = append(names, p.Name)
		}
		next := nextLink(page.Link.Or(""))
		if next == "" {
			break
		}
		u, err := baseURL.Parse(next)
		if err != nil {
			return err
		}
		params.Cursor = client.NewOptString(u.Query().Get("cursor"))
	}
	fmt.Println("pets:", strings.Join(names, ", "))
	return nil
}

// lookUpBatch is the batch lookup, as ogen sends ids (ids=1&ids=2).
func lookUpBatch(ctx context.Context, c *client.Client) error {
	res, err := c.ListPets(ctx, client.ListPetsParams{Ids: []int64{1, 2}})
	if err != nil {
		return err
	}
	batch, ok := res.(*client.PetsHeaders)
	if !ok || len(batch.Response) != 2 {
		return fmt.Errorf("ids=1&ids=2: %T %+v", res, res)
	}
	fmt.Println("batch lookup:", batch.Response[0].Name, batch.Response[1].Name)
	return nil
}

// placeOnce is step 5: one order, sent twice with one Idempotency-Key, is placed
// once.
func placeOnce(ctx context.Context, c *client.Client) error {
	idem := client.NewOptString(rand.Text())
	var ids []int64
	for range 2 {
		res, err := c.PlaceOrder(ctx, &client.NewOrder{PetId: 1, Quantity: 1}, client.PlaceOrderParams{IdempotencyKey: idem})
		if err != nil {
			return err
		}
		o, ok := res.(*client.OrderHeaders)
		if !ok {
			return fmt.Errorf("place an order: %T %+v", res, res)
		}
		ids = append(ids, o.Response.ID)
	}
	if ids[0] != ids[1] {
		return fmt.Errorf("one Idempotency-Key placed orders %d and %d", ids[0], ids[1])
	}
	fmt.Println("order placed once")
	return nil
}

// refuseOverStock is step 6: an order of more than the stock is refused. The
// declared 409 is a typed answer beside err == nil; an answer the operation does
// not declare comes as the error *DefaultStatusCodeWithHeaders.
func refuseOverStock(ctx context.Context, c *client.Client) error {
	res, err := c.PlaceOrder(ctx, &client.NewOrder{PetId: 1, Quantity: 100}, client.PlaceOrderParams{})
	var other *client.DefaultStatusCodeWithHeaders
	switch refused, ok := res.(*client.ConflictHeaders); {
	case errors.As(err, &other):
		return fmt.Errorf("an order over the stock: %d %s", other.StatusCode, other.Response.Code)
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("an order over the stock: %T %+v", res, res)
	default:
		fmt.Println("refused:", refused.Response.Code)
	}
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
