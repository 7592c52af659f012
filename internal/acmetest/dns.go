package acmetest

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS is a DNS server on TCP and UDP (Pebble asks over TCP) that answers every A question with 127.0.0.1 and every
// other question with no record: what Pebble needs to reach the test's server under
// any name, with no change to the machine's resolver.
type DNS struct {
	// Addr is where it listens, 127.0.0.1:PORT.
	Addr string

	udp net.PacketConn
	tcp net.Listener
	mu  sync.Mutex
	// asked holds the names of the A questions so far; mu guards it.
	asked []string
}

// StartDNS starts a DNS server for the test; it stops when the test ends.
func StartDNS(t testing.TB) *DNS {
	t.Helper()
	d := &DNS{}
	// TCP and UDP on one port: the UDP port of a free TCP one may be taken.
	var err error
	for range 10 {
		if d.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if d.udp, err = net.ListenPacket("udp", d.tcp.Addr().String()); err == nil {
			break
		}
		d.tcp.Close()
	}
	if err != nil {
		t.Fatalf("acmetest: no port free for DNS on both TCP and UDP: %v", err)
	}
	d.Addr = d.tcp.Addr().String()
	var wg sync.WaitGroup
	wg.Go(d.serveUDP)
	wg.Go(func() { d.serveTCP(&wg) })
	t.Cleanup(func() {
		d.tcp.Close()
		d.udp.Close()
		wg.Wait()
	})
	return d
}

// Asked reports whether an A question for name (without the final dot) has come.
func (d *DNS) Asked(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.asked, name+".")
}

func (d *DNS) serveUDP() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.udp.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		if answer, err := d.answer(buf[:n]); err == nil {
			_, _ = d.udp.WriteTo(answer, from)
		}
	}
}

// serveTCP answers each connection's messages, each after its two-byte length
// (RFC 1035, 4.2.2), until the client closes it.
func (d *DNS) serveTCP(wg *sync.WaitGroup) {
	for {
		conn, err := d.tcp.Accept()
		if err != nil {
			return // closed
		}
		wg.Go(func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			for {
				var size [2]byte
				if _, err := io.ReadFull(conn, size[:]); err != nil {
					return
				}
				query := make([]byte, binary.BigEndian.Uint16(size[:]))
				if _, err := io.ReadFull(conn, query); err != nil {
					return
				}
				answer, err := d.answer(query)
				if err != nil {
					return
				}
				if _, err := conn.Write(binary.BigEndian.AppendUint16(nil, uint16(len(answer)))); err != nil {
					return
				}
				if _, err := conn.Write(answer); err != nil {
					return
				}
			}
		})
	}
}

func (d *DNS) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: h.ID, Response: true, Authoritative: true,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true,
	})
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET {
		d.mu.Lock()
		d.asked = append(d.asked, q.Name.String())
		d.mu.Unlock()
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		if err := b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
