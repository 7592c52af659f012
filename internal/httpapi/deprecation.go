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
	sunsetAt time.Time
	date     string // YYYY-MM-DD
	// The header values, shared by every response (net/http only reads them).
	deprecationValue []string // RFC 9745: @<unix-seconds>
	sunsetValue      []string // RFC 8594: an HTTP-date
}

func newDeprecation(sunset time.Time) deprecation {
	since := deprecatedSince
	if sunset.Before(since) {
		since = sunset
	}
	return deprecation{
		sunsetAt:         sunset,
		date:             sunset.Format(time.DateOnly),
		deprecationValue: []string{"@" + strconv.FormatInt(since.Unix(), 10)},
		sunsetValue:      []string{sunset.UTC().Format(http.TimeFormat)},
	}
}

// setHeaders sets the headers of every response of the deprecated operation, errors
// and 429s included (the document marks them x-middleware: ogen does not set them).
// The Link names the pet the path asks for, or the whole list when it holds no id.
func (d deprecation) setHeaders(w http.ResponseWriter, r *http.Request) {
	link := successorPrefix + successorSuffix
	if id, err := strconv.ParseInt(r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:], 10, 64); err == nil && id > 0 {
		link = successorPrefix + "?ids=" + strconv.FormatInt(id, 10) + successorSuffix
	}
	h := w.Header()
	h["Deprecation"] = d.deprecationValue
	h["Sunset"] = d.sunsetValue
	h["Link"] = []string{link}
}

const (
	successorPrefix = "<" + apiPrefix + "/pets"
	successorSuffix = `>; rel="successor-version"`
)

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
