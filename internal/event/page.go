package event

import (
	"context"
	"fmt"
	"time"

	"github.com/stagedoor/stagedoor/internal/paging"
)

// ListQuery asks for one page of the public event list.
type ListQuery struct {
	Limit       int    // events on the page: 0 means paging.DefaultSize; at most paging.MaxSize
	After       string // the NextAfter of the page before; empty for the first page
	IncludePast bool   // list events that have started too
}

// Page is one page of the event list, soonest first. NextAfter, when not
// empty, asks for the next page; it is empty on the last.
type Page struct {
	Events    []Event
	NextAfter string
}

// firstCursor sorts before every event.
var firstCursor = paging.Cursor{At: time.Unix(0, 0).UTC(), ID: "00000000-0000-0000-0000-000000000000"}

// placeOf is where an event is in the list: its start, then its id
// (internal/paging's cursor).
func placeOf(e Event) paging.Cursor { return paging.Cursor{At: e.StartsAt, ID: e.ID} }

// page reads one page of the event list: one more row than asked for tells
// whether there is a next page. The row comparison walks the index on
// (starts_at, id) from the cursor on.
func (s store) page(ctx context.Context, q ListQuery) (Page, error) {
	after := firstCursor
	if q.After != "" {
		var err error
		if after, err = paging.Parse(q.After); err != nil {
			return Page{}, err
		}
	}
	events, err := s.list(ctx, `WHERE (e.starts_at, e.id) > ($1, $2::uuid) AND ($3 OR e.starts_at > now())
		ORDER BY e.starts_at, e.id LIMIT $4`, after.At, after.ID, q.IncludePast, q.Limit+1)
	if err != nil {
		return Page{}, fmt.Errorf("event: list a page: %w", err)
	}
	p := Page{}
	p.Events, p.NextAfter = paging.Cut(events, q.Limit, placeOf)
	return p, nil
}
