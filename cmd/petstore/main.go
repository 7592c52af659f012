// Command petstore runs the Pet Store API service.
//
//	petstore [serve] [flags]        run the service (the default)
//	petstore migrate [flags]        apply database migrations and exit
//	petstore keys create [flags]    make an API key and print it
//	petstore version                print the version and VCS revision
//	petstore help [command]         list the commands, or a command's flags
//
// Every flag can also be set as an environment variable: PETSTORE_ followed by the
// flag name in upper case with - as _ (for example PETSTORE_RATE_LIMIT). A flag wins.
// Help exits 0, a command line petstore cannot follow 2, any other failure 1.
package main

import (
	"context"
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
	code := exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(code)
}
