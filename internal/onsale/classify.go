package onsale

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/stagedoor/stagedoor/docs"
)

// documentedStatus is the status of each problem type of the contract
// (docs/openapi.yaml, components.x-problem-types), by slug: the catalogue the
// server sends its problems from.
var documentedStatus = mustCatalogue(docs.OpenAPI)

func mustCatalogue(openapi []byte) map[string]int {
	var doc struct {
		Components struct {
			ProblemTypes map[string]struct {
				Status int `yaml:"status"`
			} `yaml:"x-problem-types"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(openapi, &doc); err != nil {
		panic(fmt.Errorf("onsale: read the problem types of docs/openapi.yaml: %w", err))
	}
	out := make(map[string]int, len(doc.Components.ProblemTypes))
	for slug, t := range doc.Components.ProblemTypes {
		out[slug] = t.Status
	}
	if len(out) == 0 {
		panic("onsale: docs/openapi.yaml lists no problem types (components.x-problem-types)")
	}
	return out
}

// Kinds of answer, as the simulator counts them.
const (
	kindOK       = iota // any answer that is not one of the below: 2xx, 3xx, a 4xx that is not a 429
	kindRefused         // a refusal the contract documents: every 429, a 503 of a documented 503 type
	kindError           // a 5xx the contract does not document (a 500, an edge's 502 or 504, a 503 without its problem)
	kindNoAnswer        // no answer came (status 0)
)

// kindOf classifies an answer by its status and problem type (slug), with no
// list of refusals of its own: every 429 is a refusal (a limit's, the edge's,
// a concurrency limit's, whatever its type), and a 503 is one when its type
// is a 503 of the contract's catalogue (a bound or shedder, a waiting room
// whose Redis is down, PostgreSQL, Payrail). Any other 5xx is an error.
func kindOf(status int, slug string) int {
	switch {
	case status == 0:
		return kindNoAnswer
	case status == 429:
		return kindRefused
	case status == 503 && documentedStatus[slug] == 503:
		return kindRefused
	case status >= 500:
		return kindError
	}
	return kindOK
}

// refusedBy names what refused an answer of kindRefused, for the counts by
// limit: the limit its problem names (hold-buyer, buyer-concurrency), else
// the bound of a service-overloaded (in_flight, checkout, stream,
// connections, waiting_room, or the shedder: worker-utilization,
// fleet-usage), else "edge" for a 429 that no instance answered (HAProxy's
// limit per address: no X-Served-By), else the problem's type
// (payment-unavailable; service-unavailable; service-overloaded from a server
// that names no bound).
func refusedBy(status int, slug, limit, bound, instance string) string {
	switch {
	case limit != "":
		return limit
	case bound != "":
		return bound
	case status == 429 && (instance == "" || instance == "-"):
		return edgeLimit
	case slug != "":
		return slug
	}
	return fmt.Sprintf("%d without a problem", status)
}
