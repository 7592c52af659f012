package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
)

// listeners are the sockets serve listens on: the API's, the operator port's and the
// redirect to HTTPS; the last two may be nil.
type listeners struct {
	api, admin, redirect net.Listener
	// https is how the API listener speaks HTTPS; nil for plain HTTP.
	https *httpsOn
	// toHTTPS is the redirect listener's handler. It is made with the listener: with
	// ACME, making it turns HTTP-01 on, which must be before the first certificate is
	// asked for (httpsOn.start), or that order would try TLS-ALPN-01 alone.
	toHTTPS http.Handler
}

// listen opens the listeners of c. The operator port on its default address may be
// taken (another server on this machine): then serve runs without it, and says so.
func (c serveConfig) listen(log *slog.Logger, https *httpsOn) (ls listeners, err error) {
	ls.https = https
	defer func() {
		if err != nil {
			ls.close()
		}
	}()
	if ls.api, err = net.Listen("tcp", c.addr); err != nil {
		return ls, err
	}
	if c.adminAddr != "" {
		ls.admin, err = net.Listen("tcp", c.adminAddr)
		switch {
		case err != nil && c.adminAddr == defaultAdminAddr:
			log.Warn("the operator port is taken; /metrics and /debug/pprof are off (set --admin-addr)", "addr", c.adminAddr, "err", err)
			ls.admin, err = nil, nil
		case err != nil:
			return ls, fmt.Errorf("--admin-addr: %w", err)
		}
	}
	if c.httpRedirectAddr != "" {
		if ls.redirect, err = net.Listen("tcp", c.httpRedirectAddr); err != nil {
			return ls, fmt.Errorf("--http-redirect-addr: %w", err)
		}
		ls.toHTTPS = https.redirect(c.publicURL, ls.api.Addr().String())
	}
	return ls, nil
}

func (ls listeners) close() {
	for _, l := range []net.Listener{ls.api, ls.admin, ls.redirect} {
		if l != nil {
			l.Close()
		}
	}
}

// addrs are the addresses listened on.
func (ls listeners) addrs() []net.Addr {
	var out []net.Addr
	for _, l := range []net.Listener{ls.api, ls.admin, ls.redirect} {
		if l != nil {
			out = append(out, l.Addr())
		}
	}
	return out
}

// baseURL is how a client on this machine reaches the API (https when it is HTTPS).
func (ls listeners) baseURL() string {
	if ls.https != nil {
		return baseURL("https", ls.api.Addr())
	}
	return baseURL("http", ls.api.Addr())
}

// announce says where serve listens; servetest waits for its first line.
func (ls listeners) announce(stdout io.Writer, base string) {
	fmt.Fprintf(stdout, "petstore listening on %s\n  API       %s/v1\n  docs      %s/docs\n  console   %s/console\n  document  %s/openapi.yaml\n", base, base, base, base, base)
	if ls.redirect != nil {
		fmt.Fprintf(stdout, "  redirect  %s to HTTPS\n", baseURL("http", ls.redirect.Addr()))
	}
	if ls.admin != nil {
		fmt.Fprintf(stdout, "  operator  http://%s/metrics, http://%s/debug/pprof/\n", ls.admin.Addr(), ls.admin.Addr())
	}
}
