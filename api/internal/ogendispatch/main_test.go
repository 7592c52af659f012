package main

import (
	"strings"
	"testing"
)

const handlers = `package oas

func (s *Server) handleGetPetByIdRequest(args [1]string, argsEscaped bool, w http.ResponseWriter, r *http.Request) {}
func (s *Server) handleRetryDeliveryRequest(args [2]string, argsEscaped bool, w http.ResponseWriter, r *http.Request) {}
func (s *Server) handleCreatePetRequest(args [0]string, argsEscaped bool, w http.ResponseWriter, r *http.Request) {}
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {}
`

func TestRender(t *testing.T) {
	hs, pkg, err := findHandlers([]byte(handlers))
	if err != nil {
		t.Fatal(err)
	}
	if pkg != "oas" || len(hs) != 3 {
		t.Fatalf("package %q, handlers %v", pkg, hs)
	}
	out, err := render(pkg, hs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"case CreatePetOperation:\n\t\ts.handleCreatePetRequest([0]string{}, false, w, r)",
		"case GetPetByIdOperation:\n\t\ts.handleGetPetByIdRequest([1]string{route.args[0]}, false, w, r)",
		"case RetryDeliveryOperation:\n\t\ts.handleRetryDeliveryRequest([2]string{route.args[0], route.args[1]}, false, w, r)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := findHandlers([]byte("package oas\n")); err == nil {
		t.Error("a file without handlers was accepted")
	}
}
