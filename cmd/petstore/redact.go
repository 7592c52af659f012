package main

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// redactDSN hides a password in a URL (in the user part or a password parameter)
// before it is shown; anything else comes back as it is. A URL too broken to parse
// may hold a password still, so its user part and password parameter are hidden by
// their shape.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil && userPartMisread(dsn) {
		if i, at := strings.Index(dsn, "://"), strings.LastIndex(dsn, "@"); i >= 0 && at > i {
			dsn = dsn[:i+3] + "xxx" + dsn[at:]
		}
		return passwordParam.ReplaceAllString(dsn, "${1}xxx")
	}
	if u.Scheme == "" {
		return dsn
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
		changed = true
	}
	if q := u.Query(); q.Has("password") || q.Has("sslpassword") {
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, "xxx")
			}
		}
		u.RawQuery = q.Encode()
		changed = true
	}
	if !changed {
		return dsn
	}
	return u.String()
}

// userPartMisread reports an "@" after "://" in a URL read without a user part: a
// password with a "/" in it ends the authority early ("app:123/x@db" reads as host
// app, port 123 and a path), so the URL is treated as one too broken to parse.
func userPartMisread(dsn string) bool {
	i := strings.Index(dsn, "://")
	return i >= 0 && strings.Contains(dsn[i+3:], "@")
}

// passwordParam is a password parameter of a URL that could not be parsed.
var passwordParam = regexp.MustCompile(`(?i)([?&](?:ssl)?password=)[^&#\s]*`)

// redactArgs is a command line with the passwords of its URLs hidden (redactDSN):
// --database and --redis, and any other argument that carries one, as a value of
// its own or after --flag=.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
			out[i] = name + "=" + redactDSN(value)
			continue
		}
		out[i] = redactDSN(a)
	}
	return out
}

// cmdline serves what net/http/pprof's Cmdline does, the command line NUL-separated,
// with the passwords hidden: the operator port is for profiles, not for the
// database's credentials.
func cmdline(args []string) http.HandlerFunc {
	shown := strings.Join(redactArgs(args), "\x00")
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, shown)
	}
}

// hideURL returns err with raw, a URL the command was given, shown redacted in its
// text: some libraries quote the URL they could not use.
func hideURL(err error, raw string) error {
	if err == nil || raw == "" {
		return err
	}
	shown := redactDSN(raw)
	if shown == raw || !strings.Contains(err.Error(), raw) {
		return err
	}
	return redactedError{msg: strings.ReplaceAll(err.Error(), raw, shown), err: err}
}

// redactedError is an error whose text hides a password; errors.Is and As still
// reach the error it stands for.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
