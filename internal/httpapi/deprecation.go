package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// deprecatedSince is when getPetById was deprecated (the release of interface 1.0.0).
// Deprecation never names a time after Sunset, so an earlier sunset pulls it forward.
var deprecatedSince = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// deprecation holds the precomputed headers of the deprecated getPetById.
type deprecation struct {
	sunsetAt    time.Time
	date        string // YYYY-MM-DD
	deprecation string // RFC 9745: @<unix-seconds>
	sunset      string // RFC 8594: an HTTP-date
}

func newDeprecation(sunset time.Time) deprecation {
	since := deprecatedSince
	if sunset.Before(since) {
		since = sunset
	}
	return deprecation{
		sunsetAt:    sunset,
		date:        sunset.Format(time.DateOnly),
		deprecation: "@" + strconv.FormatInt(since.Unix(), 10),
		sunset:      sunset.UTC().Format(http.TimeFormat),
	}
}

type deprecationHeaders struct{ deprecation, sunset, link string }

// headers returns the headers of a response about pet id (0 when the path holds no
// valid id).
func (d deprecation) headers(id int64) deprecationHeaders {
	succ := apiPrefix + "/pets"
	if id > 0 {
		succ += "?ids=" + strconv.FormatInt(id, 10)
	}
	return deprecationHeaders{deprecation: d.deprecation, sunset: d.sunset, link: "<" + succ + `>; rel="successor-version"`}
}

// setHeaders sets the headers on a response of the deprecated operation; the
// middleware calls it for every response, errors included, and keeps them in ri for
// the handler, whose typed response carries them too.
func (d deprecation) setHeaders(w http.ResponseWriter, r *http.Request, ri *requestInfo) {
	id, _ := strconv.ParseInt(r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:], 10, 64)
	hd := d.headers(max(id, 0))
	ri.deprecation = hd
	h := w.Header()
	h["Deprecation"] = []string{hd.deprecation}
	h["Sunset"] = []string{hd.sunset}
	h["Link"] = []string{hd.link}
}

// gone answers 410 once the sunset has come, whoever asks (the operation is gone for
// everyone, so no key is needed to learn it), and reports whether it did.
func (d deprecation) gone(w http.ResponseWriter, now time.Time) bool {
	if !now.Before(d.sunsetAt) {
		writeError(w, petstore.Errorf(petstore.EGone, "This operation was removed on %s; use GET /v1/pets?ids= instead.", d.date))
		return true
	}
	return false
}

// getPetByID is the operation id of the deprecated operation.
const getPetByID = "getPetById"
