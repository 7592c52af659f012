// A webhook receiver in Go that checks Petstore-Signature before it trusts a
// delivery. Run: PETSTORE_WEBHOOK_SECRET=whsec_… PORT=4242 go run .
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const tolerance = 5 * time.Minute

// verify reports whether header signs body (the raw bytes): a timestamp within the
// tolerance and one v1 (two while a rotated secret overlaps) equal to HMAC-SHA256 of
// "<t>.<body>" under secret.
func verify(header string, body, secret []byte) bool {
	var t string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			t = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	unix, err := strconv.ParseInt(t, 10, 64)
	if err != nil || time.Since(time.Unix(unix, 0)).Abs() > tolerance {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	fmt.Fprintf(mac, "%s.", t)
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

func main() {
	secret := []byte(os.Getenv("PETSTORE_WEBHOOK_SECRET"))
	var mu sync.Mutex
	seen := map[string]bool{} // event ids already handled: a delivery may come more than once
	http.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !verify(r.Header.Get("Petstore-Signature"), body, secret) {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		var event struct{ ID, Type string }
		if err := json.Unmarshal(body, &event); err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		mu.Lock()
		if !seen[event.ID] {
			seen[event.ID] = true
			fmt.Println(event.Type, event.ID)
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening")
	log.Fatal(http.Serve(ln, nil))
}
