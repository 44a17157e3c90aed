package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// BenchmarkLoginRefused is the server time of a login refused by login-address
// once its bucket is empty: the whole handler chain, no password hash.
// Compare with BenchmarkBcryptDefaultCost: the refusal must cost under 1% of it.
func BenchmarkLoginRefused(b *testing.B) {
	ts := startInstance(b, instance{})
	body := `{"email":"someone@example.com","password":"wrong password"}`
	serve := func() int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/login", strings.NewReader(body))
		req.RemoteAddr = "203.0.113.9:4000"
		ts.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	for range 10 {
		serve()
	}
	hashes := ts.Auth.Hashes()
	b.ReportAllocs()
	for b.Loop() {
		if code := serve(); code != 429 {
			b.Fatalf("status %d, want 429", code)
		}
	}
	if ts.Auth.Hashes() != hashes {
		b.Fatal("a refused login computed a hash")
	}
}

// BenchmarkBcryptDefaultCost is one password comparison at cost 12, the default.
func BenchmarkBcryptDefaultCost(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("correct horse"), 12)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = bcrypt.CompareHashAndPassword(hash, []byte("wrong password"))
	}
}
