package ids

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b":  "0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
		"0B8F5A4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B":  "0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
		"":                                      "",
		"42":                                    "",
		"0b8f5a4e1c2d4e5f8a9b0c1d2e3f4a5b":      "",
		"{0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5}": "",
		"0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5g":  "",
		"0b8f5a4e_1c2d-4e5f-8a9b-0c1d2e3f4a5b":  "",
		"0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5é":  "",
	} {
		got, ok := Parse(in)
		if got != want || ok != (want != "") {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestNew(t *testing.T) {
	a, b := New(), New()
	if a == b {
		t.Fatal("two New ids are equal")
	}
	for _, id := range []string{a, b} {
		if got, ok := Parse(id); !ok || got != id || id[14] != '4' {
			t.Errorf("New() = %q, not a canonical version 4 UUID", id)
		}
	}
}

func TestBytesRoundTrip(t *testing.T) {
	id := New()
	b, ok := Bytes(id)
	if !ok || FromBytes(b) != id {
		t.Fatalf("Bytes(%s) = %x, %v; FromBytes = %s", id, b, ok, FromBytes(b))
	}
	if _, ok := Bytes("0B8F5A4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"); !ok {
		t.Error("upper case refused")
	}
	if _, ok := Bytes("42"); ok {
		t.Error("42 read as a UUID")
	}
}
