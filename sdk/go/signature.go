package petstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The headers of a webhook delivery.
const (
	// SignatureHeader carries the delivery's signatures:
	// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">", with one v1 per secret
	// that signs (two while a rotated secret overlaps the new one).
	SignatureHeader = "Petstore-Signature"
	// EventIDHeader carries the event's id, by which a receiver drops a repeat.
	EventIDHeader = "Petstore-Event-Id"
)

// DefaultTolerance is how far the timestamp of a delivery's signature may be from the
// receiver's clock, either way, unless WebhookVerifier.Tolerance says otherwise: a
// delivery captured and replayed later than this is refused.
const DefaultTolerance = 5 * time.Minute

// The reasons a delivery is refused, for errors.Is. A refused delivery is best
// answered 400: the service tries it again later.
var (
	// ErrNoSignature: the delivery has no Petstore-Signature, or one without a v1
	// signature (only schemes this package does not know).
	ErrNoSignature = errors.New("petstore: no v1 signature in the Petstore-Signature header")
	// ErrMalformedSignature: the header is not "t=<unix seconds>,v1=<64 hex digits>…".
	ErrMalformedSignature = errors.New("petstore: malformed Petstore-Signature header")
	// ErrSignatureMismatch: no v1 signature is the one the secret makes of this body.
	// The body was changed, or signed with another secret (after a rotation with no
	// overlap, say), or is not the raw body as received.
	ErrSignatureMismatch = errors.New("petstore: no v1 signature matches the secret")
	// ErrTimestampOutOfTolerance: the signature is genuine, but its timestamp is further
	// from the receiver's clock than the tolerance: a replay, or a clock that is wrong.
	ErrTimestampOutOfTolerance = errors.New("petstore: the signature's timestamp is outside the tolerance")
)

// ConstructEvent checks that payload, the raw body of a webhook delivery, is signed
// with secret (the endpoint's whsec_…) by signatureHeader, the delivery's
// Petstore-Signature, within DefaultTolerance of the clock, and returns the event it
// holds. Verify the bytes as received, before any JSON parsing: a body parsed and
// written again is not the body that was signed.
//
// A refused delivery is an error that errors.Is one of ErrNoSignature,
// ErrMalformedSignature, ErrSignatureMismatch or ErrTimestampOutOfTolerance. A
// WebhookVerifier sets another tolerance or clock.
func ConstructEvent(payload []byte, signatureHeader, secret string) (*Event, error) {
	return WebhookVerifier{Secret: secret}.ConstructEvent(payload, signatureHeader)
}

// WebhookVerifier checks the signatures of webhook deliveries. The zero Tolerance and
// Now are the defaults, so WebhookVerifier{Secret: secret} verifies as ConstructEvent
// does.
type WebhookVerifier struct {
	// Secret is the endpoint's signing secret (whsec_…), the whole string: what
	// CreateWebhook or RotateWebhookSecret answered.
	Secret string
	// Tolerance is how far a signature's timestamp may be from Now, either way;
	// DefaultTolerance (5 minutes) when 0.
	Tolerance time.Duration
	// Now is the receiver's clock; time.Now when nil.
	Now func() time.Time
}

// ConstructEvent verifies a delivery as Verify does, then returns the event it holds.
func (v WebhookVerifier) ConstructEvent(payload []byte, signatureHeader string) (*Event, error) {
	if err := v.Verify(payload, signatureHeader); err != nil {
		return nil, err
	}
	var w wireEvent
	if err := json.Unmarshal(payload, &w); err != nil {
		return nil, fmt.Errorf("petstore: reading the delivered event: %w", err)
	}
	return w.event, nil
}

// Verify checks that signatureHeader signs payload with v.Secret within the
// tolerance: one v1 (of any number) must be the hex HMAC-SHA256 of "<t>.<payload>"
// under the secret, compared in constant time, and t within Tolerance of Now. Schemes
// other than v1 (v0, a later v2) are ignored. The signature is checked before the
// timestamp, so that ErrTimestampOutOfTolerance is only ever said of a genuine
// delivery.
func (v WebhookVerifier) Verify(payload []byte, signatureHeader string) error {
	if v.Secret == "" {
		return errors.New("petstore: no webhook secret to verify the delivery with")
	}
	sig, err := parseSignature(signatureHeader)
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(v.Secret))
	mac.Write([]byte(sig.t))
	mac.Write([]byte{'.'})
	mac.Write(payload)
	want := mac.Sum(nil)
	matched := false
	for _, s := range sig.v1 {
		matched = hmac.Equal(s, want) || matched
	}
	if !matched {
		return ErrSignatureMismatch
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if off := now().Sub(sig.at); off > tolerance || off < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", ErrTimestampOutOfTolerance,
			sig.at.UTC().Format(time.RFC3339), off.Abs().Round(time.Second), tolerance)
	}
	return nil
}

// signature is a parsed Petstore-Signature header.
type signature struct {
	t  string    // the timestamp as sent: what was signed
	at time.Time // the timestamp as a time
	v1 [][]byte  // the v1 signatures
}

// parseSignature reads "t=<unix seconds>,v1=<hex>[,v1=<hex>…]", in any order, with
// other schemes beside them ignored.
func parseSignature(header string) (signature, error) {
	var sig signature
	if strings.TrimSpace(header) == "" {
		return sig, ErrNoSignature
	}
	malformed := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformedSignature, fmt.Sprintf(format, args...))
	}
	seenT := false
	for _, part := range strings.Split(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || key == "" {
			return sig, malformed("%q is not a key=value pair", part)
		}
		switch key {
		case "t":
			if seenT {
				return sig, malformed("more than one t")
			}
			seenT = true
			// Digits only: ParseInt would also take a sign, which the service never sends.
			unix, err := strconv.ParseInt(value, 10, 64)
			if err != nil || strings.Trim(value, "0123456789") != "" {
				return sig, malformed("t=%q is not a number of seconds", value)
			}
			sig.t, sig.at = value, time.Unix(unix, 0)
		case "v1":
			s, err := hex.DecodeString(value)
			if err != nil || len(s) != sha256.Size {
				return sig, malformed("v1=%q is not 64 hexadecimal digits", value)
			}
			sig.v1 = append(sig.v1, s)
		}
	}
	if !seenT {
		return sig, malformed("no t")
	}
	if len(sig.v1) == 0 {
		return sig, ErrNoSignature
	}
	return sig, nil
}
