package event

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// The sizes of a page of the public event list.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// ListQuery asks for one page of the public event list.
type ListQuery struct {
	Limit       int    // events on the page: 0 means DefaultPageSize; at most MaxPageSize
	After       string // the NextAfter of the page before; empty for the first page
	IncludePast bool   // list events that have started too
}

// Page is one page of the event list, soonest first. NextAfter, when not
// empty, asks for the next page; it is empty on the last.
type Page struct {
	Events    []Event
	NextAfter string
}

// cursor is the place in the list after which a page starts: the last event
// of the page before, by start time and id (the list's order).
type cursor struct {
	startsAt time.Time
	id       string
}

// String encodes the cursor for a client, who keeps it as an opaque token.
func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.startsAt.UTC().Format(time.RFC3339Nano) + "_" + c.id))
}

// parseCursor decodes a cursor a client sent back, or returns an
// errkind.Invalid error.
func parseCursor(s string) (cursor, error) {
	bad := invalid("after must be the next_after of an earlier page")
	if len(s) > 128 {
		return cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	at, id, ok := strings.Cut(string(raw), "_")
	if !ok {
		return cursor{}, bad
	}
	startsAt, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return cursor{}, bad
	}
	if id, ok = ids.Parse(id); !ok {
		return cursor{}, bad
	}
	return cursor{startsAt: startsAt, id: id}, nil
}

// firstCursor sorts before every event.
var firstCursor = cursor{startsAt: time.Unix(0, 0).UTC(), id: "00000000-0000-0000-0000-000000000000"}

// page reads one page of the event list: one more row than asked for tells
// whether there is a next page. The row comparison walks the index on
// (starts_at, id) from the cursor on.
func (s store) page(ctx context.Context, q ListQuery) (Page, error) {
	after := firstCursor
	if q.After != "" {
		var err error
		if after, err = parseCursor(q.After); err != nil {
			return Page{}, err
		}
	}
	events, err := s.list(ctx, `WHERE (e.starts_at, e.id) > ($1, $2::uuid) AND ($3 OR e.starts_at > now())
		ORDER BY e.starts_at, e.id LIMIT $4`, after.startsAt, after.id, q.IncludePast, q.Limit+1)
	if err != nil {
		return Page{}, fmt.Errorf("event: list a page: %w", err)
	}
	p := Page{Events: events}
	if len(events) > q.Limit {
		p.Events = events[:q.Limit]
		last := p.Events[q.Limit-1]
		p.NextAfter = cursor{startsAt: last.StartsAt, id: last.ID}.String()
	}
	return p, nil
}
