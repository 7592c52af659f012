package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Message is one mail to one recipient, in plain text.
type Message struct {
	// To is one address, as net/mail reads it: "ann@example.com" or
	// "Ann <ann@example.com>".
	To string
	// Subject is one line of text (no line break, no control character), 200
	// characters at most; any Unicode.
	Subject string
	// Text is the body, UTF-8; its line breaks (\n or \r\n) are kept.
	Text string
}

// MaxSubject is the longest Subject, in characters.
const MaxSubject = 200

// maxAddress is the longest To or From as given: an address (254 bytes at most in
// SMTP) and a display name.
const maxAddress = 512

// ErrInvalid is wrapped by the errors of a Message that cannot be sent as it is: a
// bad address, a line break in a header. Nothing was sent.
var ErrInvalid = errors.New("invalid message")

// CheckAddress reports whether s is one address that Message.To or New's from
// accepts.
func CheckAddress(s string) error {
	_, err := parseAddress(s)
	return err
}

// parseAddress reads one address. A line break or any other control character is
// refused before net/mail reads it: one would let the text add headers of its own.
func parseAddress(s string) (*mail.Address, error) {
	if s == "" {
		return nil, errors.New("no address")
	}
	if len(s) > maxAddress {
		return nil, fmt.Errorf("an address of %d bytes (at most %d)", len(s), maxAddress)
	}
	if err := oneLine(s); err != nil {
		return nil, err
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an email address: %w", s, err)
	}
	if strings.ContainsAny(a.Address, "<>\x00 ") {
		return nil, fmt.Errorf("%q is not an address SMTP can carry", a.Address)
	}
	return a, nil
}

// oneLine refuses invalid UTF-8 and control characters (CR and LF above all).
func oneLine(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return fmt.Errorf("a control character (%U), a line break perhaps, at byte %d", s[i], i)
	}
	return nil
}

// compose checks m and writes it as an RFC 5322 message dated now: the headers, then
// the text in quoted-printable (lines of 76 characters at most, whatever the text;
// every server carries it). It returns the recipient's address for RCPT TO.
func (s *Sender) compose(m Message, now time.Time) (string, []byte, error) {
	to, err := parseAddress(m.To)
	if err != nil {
		return "", nil, fmt.Errorf("%w: To: %w", ErrInvalid, err)
	}
	if err := oneLine(m.Subject); err != nil {
		return "", nil, fmt.Errorf("%w: Subject: %w", ErrInvalid, err)
	}
	if n := utf8.RuneCountInString(m.Subject); n == 0 || n > MaxSubject {
		return "", nil, fmt.Errorf("%w: Subject: %d characters (want 1 to %d)", ErrInvalid, n, MaxSubject)
	}
	if !utf8.ValidString(m.Text) {
		return "", nil, fmt.Errorf("%w: Text: not valid UTF-8", ErrInvalid)
	}
	id, err := messageID(s.from.Address)
	if err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	header("From", s.from.String())
	header("To", to.String())
	header("Subject", encodeSubject(m.Subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", id)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	// RFC 3834: made by a program, so that out-of-office robots do not answer.
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(m.Text)); err != nil {
		return "", nil, err
	}
	if err := qp.Close(); err != nil {
		return "", nil, err
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		b.WriteString("\r\n")
	}
	return to.Address, b.Bytes(), nil
}

// encodeSubject writes a subject as a header value: as it is when it is ASCII, else
// as RFC 2047 encoded words, one per line (a header line stays under 78 characters;
// readers join adjacent encoded words without the space between them).
func encodeSubject(s string) string {
	enc := mime.QEncoding.Encode("utf-8", s)
	if enc == s {
		return s
	}
	return strings.ReplaceAll(enc, "?= =?", "?=\r\n =?")
}

// messageID is a new Message-ID: 128 random bits at the domain of the From address.
func messageID(from string) (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	domain := from[strings.LastIndex(from, "@")+1:]
	return "<" + hex.EncodeToString(r[:]) + "@" + domain + ">", nil
}
