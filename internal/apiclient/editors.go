package apiclient

import (
	"context"
	"net/http"
)

// Answer is what every answer of ClientWithResponses tells, whatever its
// operation: its status and its body as it came.
type Answer interface {
	StatusCode() int
	Status() string
	GetBody() []byte
}

// Bearer authenticates a request with a session token (or the admin token).
func Bearer(token string) RequestEditorFn {
	return Header("Authorization", "Bearer "+token)
}

// Header sets one header of a request: X-Api-Key, Queue-Token, Origin….
func Header(name, value string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set(name, value)
		return nil
	}
}

// SeatedSection is a seated section of an EventRequest: rows of seats.
func SeatedSection(name string, rows, seatsPerRow, priceCents int) SectionRequest {
	var s SectionRequest
	_ = s.FromSeatedSectionRequest(SeatedSectionRequest{Name: name, Rows: int32(rows), SeatsPerRow: int32(seatsPerRow), PriceCents: int32(priceCents)})
	return s
}

// GeneralSection is a section of general admission of an EventRequest:
// capacity places, held by quantity.
func GeneralSection(name string, capacity, priceCents int) SectionRequest {
	var s SectionRequest
	_ = s.FromGeneralSectionRequest(GeneralSectionRequest{Name: name, GeneralAdmission: true, Capacity: int32(capacity), PriceCents: int32(priceCents)})
	return s
}
