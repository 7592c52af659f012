package mail

import (
	"strings"
	"testing"
)

func TestNewReadsTheURL(t *testing.T) {
	for _, c := range []struct {
		url, addr, user, password string
		implicit                  bool
	}{
		{"smtp://mail.example.com", "mail.example.com:587", "", "", false},
		{"smtps://mail.example.com", "mail.example.com:465", "", "", true},
		{"smtp://127.0.0.1:1025", "127.0.0.1:1025", "", "", false},
		{"smtp://[::1]:25/", "[::1]:25", "", "", false},
		{"SMTPS://apikey:SG.x%2By%2Fz%40w@smtp.example.com:2465", "smtp.example.com:2465", "apikey", "SG.x+y/z@w", true},
		{"smtp://ann%40example.com:pw@mail.example.com", "mail.example.com:587", "ann@example.com", "pw", false},
	} {
		s, err := New(c.url, "shop@example.com")
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if s.Host() != c.addr || s.user != c.user || s.password != c.password || s.auth != (c.user != "") || s.implicit != c.implicit {
			t.Errorf("%s: %s %q %q %v %v", c.url, s.Host(), s.user, s.password, s.auth, s.implicit)
		}
	}
}

// A URL or a From address that cannot be used is refused at once, by an error that
// does not quote the password.
func TestNewRefusesWhatItCannotUse(t *testing.T) {
	for _, c := range [][2]string{
		{"", "shop@example.com"},
		{"mail.example.com:587", "shop@example.com"},
		{"http://mail.example.com", "shop@example.com"},
		{"smtp://", "shop@example.com"},
		{"smtp:mail.example.com", "s3cret@example.com"},
		{"smtp://:s3cret@:25", "shop@example.com"},
		{"smtp://u:s3cret@mail.example.com:smtp", "shop@example.com"},
		{"smtp://u:s3cret@mail.example.com/x", "shop@example.com"},
		{"smtp://u:s3cret@mail.example.com?tls=off", "shop@example.com"},
		{"smtp://u:s3cret@mail.example.com#x", "shop@example.com"},
		{"smtp://u@mail.example.com", "shop@example.com"},
		{"smtp://u:@mail.example.com", "shop@example.com"},
		{"smtp://:s3cret@mail.example.com", "shop@example.com"},
		{"smtp://u:s3cr%zzet@mail.example.com", "shop@example.com"},
		{"smtp://u:s3cret@mail.example.com", ""},
		{"smtp://u:s3cret@mail.example.com", "not an address"},
		{"smtp://u:s3cret@mail.example.com", "shop@example.com\r\nBcc: eve@example.com"},
		{"smtp://u:s3cret@mail.example.com", "shop@example.com, eve@example.com"},
	} {
		_, err := New(c[0], c[1])
		if err == nil {
			t.Errorf("New(%q, %q): no error", c[0], c[1])
			continue
		}
		if strings.Contains(err.Error(), "s3cr") && !strings.Contains(c[1], "s3cr") {
			t.Errorf("New(%q, %q): the error shows the password: %v", c[0], c[1], err)
		}
	}
}

func TestPickMechanism(t *testing.T) {
	for offered, want := range map[string]string{
		"PLAIN LOGIN": "PLAIN", "LOGIN PLAIN CRAM-MD5": "PLAIN", "login": "LOGIN",
		"CRAM-MD5 XOAUTH2": "", "": "",
	} {
		if got := pickMechanism(offered); got != want {
			t.Errorf("%q: %q, want %q", offered, got, want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true,
		"localhost.example.com": false, "10.0.0.1": false, "mail.example.com": false, "::ffff:127.0.0.1": true, "0.0.0.0": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
}
