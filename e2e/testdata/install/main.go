// The program TestConsumerMatrix builds in a new module outside the repository, whose
// go.mod requires the Go SDK as sdk/go/README.md says: it lists the pets.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

func main() {
	client, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), petstore.WithAPIKey(os.Getenv("PETSTORE_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for pet, err := range client.ListPets(context.Background(), &petstore.ListPetsOptions{Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		names = append(names, pet.Name)
	}
	fmt.Println("pets:", strings.Join(names, ", "))
}
