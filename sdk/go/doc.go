// Package petstore is the Go client of the Pet Store API: pets and the categories they
// belong to, stock per pet, and customer orders that never oversell, behind API keys;
// and the events of the store, as a feed or as signed webhook deliveries, which
// ConstructEvent verifies.
//
// # Install
//
//	go get github.com/acme-pets/petstore/sdk/go@latest
//
// The package is named petstore. It needs Go 1.23 or later. Before a version is
// released, or to use a checkout of the repository, replace the module with the
// checkout and name the version it says it is (the README has the recipe):
//
//	go mod edit -replace github.com/acme-pets/petstore/sdk/go=/path/to/checkout/sdk/go
//	go get github.com/acme-pets/petstore/sdk/go@v0.1.0
//
// # First call
//
// A Client takes the API's base URL, version included, and an API key (psk_…). Every
// method takes a context first:
//
//	client, err := petstore.NewClient("http://localhost:8080/v1", petstore.WithAPIKey(key))
//	if err != nil {
//		return err
//	}
//	msg, err := client.SendMessage(ctx, petstore.NewMessage{Message: "Hello, pet store!"})
//
// No key yet? Opening an account needs no credentials, and the account's email and
// password make its first key. The service accepts the password only for the key calls,
// so WithPassword returns just those:
//
//	client, err := petstore.NewClient("http://localhost:8080/v1")
//	…
//	_, err = client.CreateAccount(ctx, petstore.NewAccount{Email: email, Password: password})
//	…
//	created, err := client.WithPassword(email, password).CreateAPIKey(ctx, petstore.NewAPIKey{Name: "laptop"})
//	…
//	client, err = petstore.NewClient("http://localhost:8080/v1", petstore.WithAPIKey(created.Key))
//
// The key is shown this once; keep it.
//
// # Least-privilege keys
//
// A key made without scopes can do all that its account may. NewAPIKey limits a key to
// some scopes (the constants of Scope) and gives it an expiry; a call outside its
// scopes is an *Error with CodeInsufficientScope whose Scope names the scope needed:
//
//	created, err := client.CreateAPIKey(ctx, petstore.NewAPIKey{
//		Name:      "storefront",
//		Scopes:    []petstore.Scope{petstore.ScopePetsRead},
//		ExpiresAt: time.Now().Add(90 * 24 * time.Hour),
//	})
//
// # Errors
//
// Every answer outside 2xx comes back as an *Error, whatever its body: its Status, its
// machine-readable Code, a Message for people, the Details of a refused field, the
// RequestID to quote to the operators, and RetryAfter. Branch on Code:
//
//	_, err := client.PlaceOrder(ctx, petstore.NewOrder{PetID: 1, Quantity: 3})
//	var apiErr *petstore.Error
//	switch {
//	case errors.As(err, &apiErr) && apiErr.Code == petstore.CodeInsufficientStock:
//		// fewer in stock than asked for
//	case err != nil:
//		return err
//	}
//
// Network errors and a canceled context are not *Error: they come back as net/http
// gives them (errors.Is(err, context.DeadlineExceeded) works).
//
// # Pagination
//
// Every list is an iter.Seq2 of items and an error. The loop fetches the pages as it goes,
// following the service's Link: <…>; rel="next" header, and stops fetching when it
// stops:
//
//	for pet, err := range client.ListPets(ctx, &petstore.ListPetsOptions{Status: petstore.PetStatusAvailable}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(pet.Name)
//	}
//
// An error ends the list: it is the last thing the loop sees.
//
// Every list also comes a page at a time, as ListPetsPages beside ListPets: each Page
// holds its Items, the Response that carried it, and Next, the cursor of the page after
// it ("" on the last page). A program that shows one page, or stops and goes on in
// another run, keeps Next and passes it back as the Cursor of the same options:
//
//	opts := &petstore.ListPetsOptions{Status: petstore.PetStatusAvailable, Limit: 25, Cursor: stored}
//	for page, err := range client.ListPetsPages(ctx, opts) {
//		if err != nil {
//			return err
//		}
//		show(page.Items)
//		stored = page.Next // "" after the last page
//		break              // one page now; the loop fetches no other
//	}
//
// The event feed is read the same way; ListEventsPages shows a poller that keeps its
// cursor and never sees an event twice.
//
// # Responses
//
// A call returns its result, not the HTTP answer. To read the answer as well (the
// X-Request-Id of a success, the rate limits left, the Location of what a create made),
// pass WithResponse, which every method takes last:
//
//	var res petstore.Response
//	pet, err := client.CreatePet(ctx, petstore.NewPet{Name: "Rex"}, petstore.WithResponse(&res))
//	if err != nil {
//		return err
//	}
//	limit, _ := res.RateLimit("default")
//	log.Printf("pet %d at %s (request %s, %d calls left)", pet.ID, res.Location, res.RequestID, limit.Remaining)
//
// Why a call option, and not go-github's (T, *Response, error) or Stripe's LastResponse
// field: a third result would change every signature of this package and make every
// caller write a blank for it, and a field of every result type would mix the answer into
// the data and has nowhere to go for the calls that return only an error. A call option,
// like gRPC's grpc.Header(&md), leaves each signature as it was (a variadic parameter
// is new, nothing else), costs nothing when unused, and reads the same on every call,
// lists included; a Page carries its own Response.
//
// # Retries
//
// A call that cannot do a thing twice is sent again after a network error, or an answer
// of 429 or 503: GET, PUT and DELETE, and PlaceOrder. The client waits what Retry-After
// asks (up to a minute), or else backs off exponentially with jitter; it gives up after
// two retries (WithRetries changes that) or when the context ends, and never waits
// longer than the context's deadline allows. Other POSTs and PATCH are sent once: a
// second attempt could make a second pet, or store a photo twice (UploadPetPhoto, whose
// body is read once, whatever it is).
//
// A DELETE sent again after a network error may find that the attempt whose answer was
// lost did the work, and answer CodeNotFound (CodeUnauthorized for RevokeAPIKey of the
// key that makes the call): from DeletePet, DeleteCategory, CancelOrder, DeleteWebhook or
// RevokeAPIKey, that code can mean the thing is gone because of this very call.
//
// # Photos
//
// UploadPetPhotoFile adds a photo to a pet from a file, with the content type its bytes
// say (JPEG, PNG or WebP; any other is refused before anything is sent):
//
//	photo, err := client.UploadPetPhotoFile(ctx, petID, "rex.jpg")
//	…
//	src := client.PhotoURL(*photo, petstore.PhotoThumb) // absolute, for an <img>
//
// The URLs of a Photo are origin-relative, as the service writes them; PhotoURL
// resolves them against the client's base URL. GetPhoto fetches the bytes; photos are
// public, so a client without a key may.
//
// PlaceOrder is safe to retry because it always sends an Idempotency-Key, the same on
// every attempt: the service places one order per key and answers a repeat with that
// order. Set NewOrder.IdempotencyKey yourself to keep that promise across restarts of
// your program.
//
// # Deprecation
//
// A deprecated operation (GetPet today) says so in the headers of every answer, with the
// date it stops working and what replaces it. By default the client logs one slog
// warning per operation; WithDeprecationHandler hands each Deprecation to a function
// instead, to count them or to fail a test. The method's doc comment says the same
// (staticcheck reports calls to it).
//
// # Webhooks
//
// An admin registers an endpoint with CreateWebhook, whose answer holds the signing
// secret (whsec_…) this once. Each delivery is a POST of one event with the header
// Petstore-Signature (SignatureHeader). A receiver verifies the raw body before it
// trusts anything in it, and gets the same *Event that ListEvents and GetEvent return:
//
//	payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
//	…
//	event, err := petstore.ConstructEvent(payload, r.Header.Get(petstore.SignatureHeader), secret)
//	if err != nil {
//		http.Error(w, "not signed by the pet store", http.StatusBadRequest)
//		return
//	}
//	if event.Type == petstore.EventTypeOrderPlaced {
//		fmt.Println(event.Order.ID)
//	}
//
// ConstructEvent accepts a delivery when one of its v1 signatures (two during a secret
// rotation's overlap) is the HMAC-SHA256 of the timestamp and the body under the secret,
// and the timestamp is within 5 minutes of the clock, either way. Each refusal
// errors.Is one of ErrNoSignature, ErrMalformedSignature, ErrSignatureMismatch and
// ErrTimestampOutOfTolerance. A WebhookVerifier sets another tolerance or clock. A
// delivery may come more than once: drop an event ID you have handled.
//
// # Values the SDK does not know
//
// Minor versions of the service may add values to the lists in its answers: a pet
// status, a role, a message status, an error code, an event type, a delivery status, a
// scope. PetStatus, Role, MessageStatus, ErrorCode, EventType, DeliveryStatus and Scope
// are strings with constants for the values known here; a new value comes through
// unchanged and never fails a call. Treat an unknown pet status as not for sale, an unknown role as no
// more than RoleCustomer, an unknown error code by its Status, an event of an unknown
// type as one to ignore (its Data is still there), an unknown delivery status as not
// delivered.
package petstore
