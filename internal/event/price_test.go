package event

import (
	"context"
	"testing"
)

// TestFromPriceIsTheLowestSectionPrice: the list, an event read alone, an
// organizer's list and the created event all carry the lowest section price.
func TestFromPriceIsTheLowestSectionPrice(t *testing.T) {
	t.Parallel()
	events, _, organizer := newEvents(t)
	ctx := context.Background()
	created := create(t, events, draft(organizer)) // Floor 5000, Balcony 2500
	free := draft(organizer)
	free.Sections[0].PriceCents, free.Sections[1].PriceCents = 0, 100
	if _, err := events.Create(ctx, free); err != nil {
		t.Fatal(err)
	}
	check := func(where string, e Event, want int64) {
		t.Helper()
		if e.FromPriceCents == nil || *e.FromPriceCents != want {
			t.Errorf("%s: from price %v, want %d", where, e.FromPriceCents, want)
		}
	}
	check("created", created, 2500)
	got, err := events.Get(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("got", got, 2500)
	page, err := events.List(ctx, ListQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 {
		t.Fatalf("listed %d events, want 2", len(page.Events))
	}
	for _, e := range page.Events {
		check("listed "+e.ID, e, map[bool]int64{true: 2500, false: 0}[e.ID == created.ID])
	}
	mine, err := events.ListByOrganizer(ctx, organizer)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range mine {
		check("organizer's "+e.ID, e, map[bool]int64{true: 2500, false: 0}[e.ID == created.ID])
	}
}
