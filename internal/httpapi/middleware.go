package httpapi

import (
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/cors"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/petstore"
)

// DefaultHandlerTimeout is the default budget of one request.
const DefaultHandlerTimeout = 10 * time.Second

// outer wraps every route: request id, nosniff, panic recovery, one log line, and the
// metrics of /v1 requests.
func (s *Server) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{id: requestID(r), conn: r.Context()}
		// Headers are set by map assignment with canonical keys and, where the value is
		// fixed, a shared slice: Header.Set would allocate for each.
		h := w.Header()
		h["X-Content-Type-Options"] = nosniff
		ri.idHeader[0] = ri.id
		h["X-Request-Id"] = ri.idHeader[:]
		rw := &ri.writer
		rw.ResponseWriter = w
		ri.w = rw
		ctx := r.Context()
		isAPI := strings.HasPrefix(r.URL.Path, apiPrefix+"/")
		var span trace.Span // nil unless tracing is on (Config.Tracer)
		if isAPI && s.tracer != nil {
			ctx, span = s.startSpan(ctx, r, ri)
		}
		if isAPI {
			s.metrics.inFlight.Inc()
			s.inFlight.Add(1)
			ri.inFlight = &s.inFlight
			// The budget of an API request and its info, in one context that the
			// info holds (budgetCtx): one request copy, no allocation of its own.
			ri.budget.start(ctx, start.Add(s.budget(r)), ri)
			ctx = &ri.budget
			defer ri.budget.release()
		} else {
			ctx = withInfo(ctx, ri)
		}
		defer func() {
			v := recover()
			if v != nil && v != http.ErrAbortHandler {
				s.recovered(ctx, v, rw, ri)
			}
			elapsed := time.Since(start)
			if isAPI {
				if !ri.leftInFlight {
					s.metrics.inFlight.Dec()
					s.inFlight.Add(-1)
				}
				s.metrics.observe(ri.operation(), rw.status, elapsed)
			}
			s.logRequest(ctx, r, ri, rw.status, elapsed, isAPI)
			if span != nil {
				endSpan(span, ri, rw.status)
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's way to abort the connection; let it through
			}
		}()
		next.ServeHTTP(rw, r.WithContext(ctx))
	})
}

// singleValued are the request headers that must come at most once (Authorization,
// also single, answers 401 when repeated).
var singleValued = []string{"Idempotency-Key", "Content-Type", "X-Request-Id"}

// Fixed header values, shared by every response (never modified).
var (
	nosniff = []string{"nosniff"}
	noStore = []string{"no-store"}
)

// recovered answers a request whose handler panicked with v: 500 internal if nothing
// was written yet; the panic is logged with the request id, never shown.
func (s *Server) recovered(ctx context.Context, v any, w *responseWriter, ri *requestInfo) {
	s.cfg.Logger.ErrorContext(ctx, "panic", "panic", v, "request_id", ri.id, "operation", ri.operation())
	if !w.wroteHeader {
		writeError(w, errInternal)
	}
}

// logRequest writes the one line of a request, with ctx, which holds its span when it
// is traced (tracing.LogHandler adds the trace id). It never logs headers or bodies,
// so no key, password or Authorization header can reach the log.
func (s *Server) logRequest(ctx context.Context, r *http.Request, ri *requestInfo, status int, elapsed time.Duration, isAPI bool) {
	level := slog.LevelInfo
	if !isAPI || ri.handwritten == getPhoto && status < 500 {
		// Probes, metrics scrapes, the document and the pictures a page shows (a
		// dozen per page of a shop) are noise; a photo that fails to load is not.
		level = slog.LevelDebug
	}
	log := s.cfg.Logger
	if !log.Enabled(ctx, level) {
		return
	}
	route := ri.route.PathPattern()
	if ri.pattern != "" {
		route = ri.pattern
	}
	if route == "" {
		route = "unmatched"
		if !isAPI {
			route = r.URL.Path
		}
	}
	// A record made here and handed to the handler: Logger.LogAttrs would also walk
	// the stack for the caller's position (runtime.Callers), which no handler of the
	// service prints, on every request.
	rec := slog.NewRecord(time.Now(), level, "request", 0)
	rec.AddAttrs(
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.String("operation", ri.operation()),
		slog.Int("status", status),
		slog.Duration("duration", elapsed),
		slog.String("request_id", ri.id),
	)
	if ri.principal.AccountID != 0 {
		rec.AddAttrs(slog.Int64("account_id", ri.principal.AccountID))
	}
	_ = log.Handler().Handle(ctx, rec) // as Logger does: a handler's failure is not the request's
}

// budget is the time a request may take: Config.HandlerTimeout, or for a photo upload
// (a body of up to 10 MiB, then seconds of decoding) Config.UploadTimeout, when longer.
func (s *Server) budget(r *http.Request) time.Duration {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/photos") {
		return max(s.cfg.HandlerTimeout, s.cfg.UploadTimeout)
	}
	return s.cfg.HandlerTimeout
}

// v1 is the middleware of the API proper.
func (s *Server) v1(next http.Handler) http.Handler {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := info(r.Context())
		w.Header()["Cache-Control"] = noStore
		if r.Method == http.MethodHead {
			// HEAD is GET without the body (RFC 9110); net/http drops the body itself,
			// since it remembers the request was HEAD.
			r.Method = http.MethodGet
		}
		if route, ok := s.api.FindPath(r.Method, r.URL); ok {
			ri.route = route
			if s.tracer != nil {
				nameSpan(trace.SpanFromContext(r.Context()), ri)
			}
		}
		op := ri.operation()
		if s.idLists[op] {
			explodeIDs(r.URL)
		}
		deprecated := op == getPetByID
		if deprecated {
			s.h.depr.setHeaders(w, r) // on every response, 429s included
		}
		// Which of several Authorization headers the generated server would read is a
		// guess; none is, and the request is refused below.
		authz := r.Header["Authorization"]
		var scheme, credentials string
		if len(authz) == 1 {
			scheme, credentials = authScheme(authz[0])
		}
		if s.limiter != nil && !s.allow(w, r, ri, scheme, credentials) {
			return
		}
		// The operations open to all (security: []) are those that take a password or
		// a one-time token: sign-up, sign-in, invitations, resets. They count against
		// the stricter limit of credential checks per client address, as HTTP Basic
		// logins do; read from the document, so a new one cannot be left out.
		if (s.open[op] || strings.EqualFold(scheme, "Basic")) && !s.allowCredentials(w, r, ri) {
			return
		}
		if deprecated && s.h.depr.gone(w, s.cfg.Now()) {
			return
		}
		if len(authz) > 1 && op != "" && !s.open[op] {
			writeError(w, errUnauthorized)
			return
		}
		for _, name := range singleValued {
			if len(r.Header[name]) > 1 {
				// Which one a layer reads would be a guess; none is taken. Like every
				// other check of the request, it comes after authentication (authorize),
				// except for the operations open to all (security: []), which have none.
				if s.open[op] {
					writeError(w, errRepeated(name))
					return
				}
				ri.refusal = errRepeated(name)
			}
		}
		if !s.limitBody(w, r, op) {
			return
		}
		if rw, ok := w.(*responseWriter); ok {
			rw.keepCORS()
		}
		next.ServeHTTP(w, r)
	})
	if len(s.cfg.CORSOrigins) > 0 {
		h = cors.New(cors.Options{
			AllowedOrigins: s.cfg.CORSOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"},
			ExposedHeaders: []string{"Link", "Location", "Retry-After", "RateLimit", "RateLimit-Policy",
				"X-Request-Id", "Deprecation", "Sunset", "WWW-Authenticate"},
			MaxAge: 600,
		}).Handler(h)
	}
	return h
}

// limitBody bounds the request's body: a JSON body by Config.BodyLimit, read through
// the scanner of repeated keys and lone surrogates; a photo's image by MaxPhotoBytes,
// refused at once when its Content-Length says more. It reports false when it answered.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request, op string) bool {
	switch {
	case op == uploadPetPhoto && r.ContentLength > MaxPhotoBytes:
		writeError(w, petstore.Errorf(petstore.EPayloadTooLarge, "The photo is larger than %d bytes (10 MiB).", MaxPhotoBytes))
		return false
	case op == uploadPetPhoto:
		r.Body = http.MaxBytesReader(w, r.Body, MaxPhotoBytes)
	case r.Body != nil && r.Body != http.NoBody:
		r.Body = &strictBody{r: http.MaxBytesReader(w, r.Body, s.cfg.BodyLimit)}
	}
	return true
}

// authScheme splits an Authorization header value as the generated server does: the
// scheme, to be compared in any letter case (RFC 9110, 11.1), and what follows the
// first space.
func authScheme(authz string) (scheme, credentials string) {
	scheme, credentials, _ = strings.Cut(authz, " ")
	return scheme, credentials
}

// allow applies the rate limit and sets its headers; it reports whether the request
// may go on. A valid key is limited by its account; anything else by client address, so that
// made-up keys cannot buy fresh allowances. The key check here is the one the security
// handler then reuses (requestInfo.key).
func (s *Server) allow(w http.ResponseWriter, r *http.Request, ri *requestInfo, scheme, credentials string) bool {
	ctx := r.Context()
	var bucket string
	if strings.EqualFold(scheme, "Bearer") {
		p, err := s.h.auth.Authenticate(ctx, credentials)
		ri.key = keyCheck{done: true, token: credentials, p: p, err: err}
		if err == nil {
			// By account, not by key: an account's keys share one allowance, so that
			// making more keys buys no more requests.
			var buf [24]byte
			bucket = string(strconv.AppendInt(append(buf[:0], "acct:"...), p.AccountID, 10))
		}
	}
	if bucket == "" {
		bucket = "ip:" + addressKey(s.clientAddr(r))
	}
	// The limiter counts in memory while a shared store does not answer
	// (ratelimit.Failover), so it has no error to give.
	d, _ := s.limiter.Allow(ctx, bucket)
	h := w.Header()
	h["Ratelimit-Policy"] = s.ratePolicy
	var buf [48]byte
	b := append(buf[:0], `"default";r=`...)
	b = strconv.AppendInt(b, int64(d.Remaining), 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, int64(ceilSeconds(d.Reset)), 10)
	h["Ratelimit"] = []string{string(b)}
	if d.Allowed {
		return true
	}
	s.metrics.rateLimited.Inc()
	retry := max(ceilSeconds(d.RetryAfter), 1)
	writeError(w, petstore.Errorf(petstore.ERateLimited, "Too many requests; retry after %d second(s).", retry))
	return false
}

// allowCredentials applies the stricter limit on requests that carry a password
// (sign-ups and HTTP Basic) per client address, adds its headers to those of the
// general limit, and reports whether the request may go on. Each such request costs
// an argon2id hash; a guesser or a flood of sign-ups gets ten a minute.
func (s *Server) allowCredentials(w http.ResponseWriter, r *http.Request, ri *requestInfo) bool {
	ri.client = s.clientAddr(r)
	if s.credentials == nil {
		return true
	}
	d, _ := s.credentials.Allow(r.Context(), "cred:"+addressKey(ri.client))
	h := w.Header()
	h["Ratelimit-Policy"] = append(slices.Clip(h["Ratelimit-Policy"]), s.credentialPolicy)
	h["Ratelimit"] = append(slices.Clip(h["Ratelimit"]),
		`"credentials";r=`+strconv.Itoa(d.Remaining)+`;t=`+strconv.Itoa(ceilSeconds(d.Reset)))
	if d.Allowed {
		return true
	}
	s.metrics.rateLimited.Inc()
	retry := max(ceilSeconds(d.RetryAfter), 1)
	h.Set("Retry-After", strconv.Itoa(retry))
	s.cfg.Logger.WarnContext(r.Context(), "password requests over the limit", "client", ri.client, "operation", ri.operation(), "request_id", ri.id)
	writeError(w, petstore.Errorf(petstore.ERateLimited, "Too many sign-ups or logins from this address; retry after %d second(s).", retry))
	return false
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// clientAddr is the address of the caller: the connection's peer, or, when that peer
// is a trusted proxy, the nearest address in X-Forwarded-For that is not one.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(s.cfg.TrustedProxies) == 0 {
		return host
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !s.trusted(addr) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := parseHop(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !s.trusted(hop) {
			return hop.String()
		}
		host = hop.String()
	}
	return host
}

// addressKey names a client address in the limits per address, so that a client
// has one allowance however many of its addresses it uses: an IPv6 address counts by
// its /64, the least a home line or a host is given (a client holds all 2^64 of it),
// and an IPv4-mapped IPv6 address is the IPv4 address. Anything that is not an
// address counts as it is.
func addressKey(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64) // drops the zone; cannot fail for 64 bits of IPv6
	return p.String()
}

// parseHop reads one X-Forwarded-For entry: an address, or an address with a port.
func parseHop(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), nil
	}
	return netip.ParseAddr(s)
}

func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// responseWriter remembers the status of the response for logs and metrics, and
// whether anything was written (so a panic handler knows if it can still answer).
type responseWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	// corsKept is set by keepCORS, and cors holds the Access-Control-* headers the
	// CORS layer had set then (nil without --cors-origins): the answer goes out with
	// those and no others.
	corsKept bool
	cors     http.Header
}

// keepCORS makes the CORS headers set so far the answer's only ones. The generated
// server sets its own, which are not its to decide: Access-Control-Expose-Headers on
// every answer that has headers (sent with no CORS configured, and replacing the CORS
// layer's list when there is), and Access-Control-Allow-* on an OPTIONS request.
func (w *responseWriter) keepCORS() {
	w.corsKept = true
	for k, v := range w.Header() {
		if isCORSHeader(k) {
			if w.cors == nil {
				w.cors = http.Header{}
			}
			w.cors[k] = v
		}
	}
}

// restoreCORS puts back the CORS headers keepCORS kept, and only those.
func (w *responseWriter) restoreCORS() {
	h := w.Header()
	for k := range h {
		if isCORSHeader(k) {
			delete(h, k)
		}
	}
	for k, v := range w.cors {
		h[k] = v
	}
}

func isCORSHeader(canonical string) bool { return strings.HasPrefix(canonical, "Access-Control-") }

func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		// Said already: the event stream writes its answer itself, and the generated
		// encoder's status after it would only be logged as superfluous.
		return
	}
	w.status, w.wroteHeader = code, true
	if w.corsKept {
		w.restoreCORS()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
		if w.corsKept {
			w.restoreCORS()
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// explodeIDs rewrites the comma-separated spelling of the ids filter (ids=1,2) of the
// operations that take one (Server.idLists, from the document) into the repeated one (ids=1&ids=2) that the document
// declares, since that is what generated clients send, and the generated decoder reads
// only the declared one. Both spellings, and a mix of them, mean the same list.
func explodeIDs(u *url.URL) {
	// Without a comma, plain or escaped, there is nothing to split; the key is not
	// looked for in the raw query, where it may be escaped (%69ds).
	raw := u.RawQuery
	if !strings.Contains(raw, ",") && !strings.Contains(raw, "%2C") && !strings.Contains(raw, "%2c") {
		return
	}
	// ParseQuery keeps the pairs it can read when it reports one it cannot (a bad
	// escape, a semicolon). The generated decoder reads r.URL.Query(), which drops the
	// same pairs, so the rewritten query means to it what the original did.
	q, _ := url.ParseQuery(raw)
	vs := q["ids"]
	if !slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, ",") }) {
		return
	}
	ids := make([]string, 0, len(vs)+strings.Count(raw, ","))
	for _, v := range vs {
		ids = append(ids, strings.Split(v, ",")...)
	}
	q["ids"] = ids
	u.RawQuery = q.Encode()
}
