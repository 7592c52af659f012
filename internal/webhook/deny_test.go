package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/webhook"
)

func TestParseDenyReadsPortsAddressesAndCIDRs(t *testing.T) {
	for _, tt := range []struct{ list, want string }{
		{"6060-6069,8080-8089", "6060-6069,8080-8089"},
		{" 9000 , 10.0.0.0/8:7000-7001 ", "9000,10.0.0.0/8:7000-7001"},
		{"10.1.2.3:80", "10.1.2.3/32:80"},
		{"10.1.2.3/8:80", "10.0.0.0/8:80"},
		{"[::1]:6060", "[::1/128]:6060"},
		{"[fd00::/8]:8080-8089", "[fd00::/8]:8080-8089"},
		{"[::ffff:10.1.2.3]:80", "10.1.2.3/32:80"},
		{"none", ""},
		{"", ""},
	} {
		d, err := webhook.ParseDeny(tt.list)
		var got []string
		for _, e := range d {
			got = append(got, e.String())
		}
		if err != nil || strings.Join(got, ",") != tt.want {
			t.Errorf("ParseDeny(%q) = %v, %v; want %s", tt.list, got, err, tt.want)
		}
	}
	for _, bad := range []string{"0", "65536", "8089-8080", "x", "::1:6060", "localhost:6060", "10.0.0.0/33:80", "10.1.2.3:", "[::1]", "6060-", "[::ffff:10.0.0.0/104]:80"} {
		if d, err := webhook.ParseDeny(bad); err == nil || !strings.Contains(err.Error(), "want PORT[-PORT]") {
			t.Errorf("ParseDeny(%q) = %v, %v; want a refusal that shows the form", bad, d, err)
		}
	}
}

// listen starts a receiver on loopback that counts the requests it gets.
func listen(t *testing.T) (port uint16, hits *atomic.Int32) {
	t.Helper()
	hits = new(atomic.Int32)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	return rcv.Listener.Addr().(*net.TCPAddr).AddrPort().Port(), hits
}

// A sibling instance's port on this machine is refused even with private addresses
// allowed: by address when the URL is checked, by name at the dial, after DNS
// resolved it. A port the list does not name is delivered to as before.
func TestSenderRefusesTheDeploymentsListenersEvenWhenPrivateIsAllowed(t *testing.T) {
	sibling, siblingHits := listen(t)
	receiver, receiverHits := listen(t)
	p := strconv.Itoa(int(sibling))
	for _, list := range []string{p, p + "-" + p, "127.0.0.0/8:" + p + ",[::1]:" + p} {
		t.Run(list, func(t *testing.T) {
			deny, err := webhook.ParseDeny(list)
			if err != nil {
				t.Fatal(err)
			}
			s := webhook.NewSender(webhook.SenderOptions{Timeout: 2 * time.Second, AllowPrivate: true, Deny: deny})
			if err := s.CheckURL("http://localhost:" + p + "/debug/pprof/profile"); err != nil {
				t.Fatalf("a name is checked at the dial, not in the URL: %v", err)
			}
			res := s.Send(context.Background(), "http://localhost:"+p+"/debug/pprof/profile", "evt_1", []byte(`{}`), now, []byte("k"))
			if !errors.Is(res.Err, webhook.ErrOwnAddress) || res.Status != 0 {
				t.Errorf("a name resolving to the sibling's port: %+v, want ErrOwnAddress at the dial", res)
			}
			res = s.Send(context.Background(), "http://127.0.0.1:"+p+"/", "evt_1", []byte(`{}`), now, []byte("k"))
			if !errors.Is(res.Err, webhook.ErrRefusedURL) || !strings.Contains(res.Err.Error(), "--webhooks-deny") {
				t.Errorf("the sibling's port by address: %+v, want the URL refused, naming --webhooks-deny", res)
			}
			if n := siblingHits.Load(); n != 0 {
				t.Fatalf("the sibling was reached %d times", n)
			}
			before := receiverHits.Load()
			res = s.Send(context.Background(), "http://localhost:"+strconv.Itoa(int(receiver))+"/hook", "evt_1", []byte(`{}`), now, []byte("k"))
			if !res.OK() || receiverHits.Load() != before+1 {
				t.Errorf("a receiver on a port not denied: %+v after %d requests", res, receiverHits.Load()-before)
			}
		})
	}
}

func TestDenyEntriesWithoutAnAddressCoverPrivateAndLoopbackOnly(t *testing.T) {
	deny, err := webhook.ParseDeny("8080-8089,93.184.215.14:443")
	if err != nil {
		t.Fatal(err)
	}
	s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true, Deny: deny})
	for url, refused := range map[string]bool{
		"http://10.1.2.3:8081/":         true,
		"http://192.168.0.7:8080/":      true,
		"http://[::1]:8089/":            true,
		"http://[fd12::1]:8085/":        true,
		"http://10.1.2.3:8090/":         false,
		"https://93.184.215.14:8080/":   false, // a public receiver on 8080 is the internet's
		"https://93.184.215.14/":        true,  // named with its address
		"https://93.184.215.14:444/":    false,
		"http://[::ffff:10.1.2.3]:8080": true,
	} {
		err := s.CheckURL(url)
		if got := err != nil && strings.Contains(err.Error(), "deployment"); got != refused {
			t.Errorf("CheckURL(%s) = %v, want refused as the deployment's: %v", url, err, refused)
		}
	}
}

// The process's own ports are refused on every private and loopback address, where
// its siblings on other machines listen on the same ones; a public address on that
// port is another service.
func TestRefuseOwnCoversTheSamePortsOnOtherPrivateHosts(t *testing.T) {
	s := webhook.NewSender(webhook.SenderOptions{Timeout: time.Second, AllowPrivate: true})
	s.RefuseOwn(net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:9123")), net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:9124")))
	for url, refused := range map[string]bool{
		"http://10.9.8.7:9123/":        true,
		"http://172.16.0.1:9124/":      true,
		"http://[fd00::5]:9123/":       true,
		"http://10.9.8.7:9125/":        false,
		"https://93.184.215.14:9123/":  false,
		"http://127.0.0.1:9123/v1/pet": true,
	} {
		err := s.CheckURL(url)
		if got := err != nil && strings.Contains(err.Error(), "must not be an address of this service"); got != refused {
			t.Errorf("CheckURL(%s) = %v, want refused as the service's own: %v", url, err, refused)
		}
	}
	if res := s.Send(context.Background(), "http://localhost:9124/", "evt_1", []byte(`{}`), now, []byte("k")); !errors.Is(res.Err, webhook.ErrOwnAddress) {
		t.Errorf("the service's own port by name: %+v, want ErrOwnAddress at the dial", res)
	}
}
