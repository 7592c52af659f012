// Command petstore runs the Pet Store API service.
//
//	petstore [serve] [flags]        run the service (the default)
//	petstore migrate [flags]        apply database migrations and exit
//	petstore keys create [flags]    make an API key and print it
//
// Every flag can also be set as an environment variable: PETSTORE_ followed by the
// flag name in upper case with - as _ (for example PETSTORE_RATE_LIMIT). A flag wins.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the first signal starts a graceful shutdown; a second one kills
	}()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "petstore:", err)
		os.Exit(1)
	}
}
