package queuetoken

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// TestTokens: a token made by one instance is good on another (the key is
// shared through PostgreSQL) and says what was signed; one altered anywhere,
// made with another key, for another event or buyer, or expired is refused.
func TestTokens(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	ctx := context.Background()
	one, two := New(db, time.Minute, nil), New(db, time.Minute, nil)
	event, buyer := ids.New(), ids.New()
	pl := waitroom.Place{EventID: event, BuyerID: buyer, Drawn: true, Rank: 41, Tick: 42_000_000}
	since := time.Now().Add(-time.Minute).Truncate(time.Second).UTC()
	token, err := one.Sign(ctx, pl, since)
	if err != nil {
		t.Fatal(err)
	}
	got, err := two.Verify(ctx, token, event, buyer)
	if err != nil || got.Place != pl || !got.Since.Equal(since) {
		t.Fatalf("another instance verifying = %+v, %v; want %+v since %s", got, err, pl, since)
	}

	refused := map[string]string{
		"another event":  event,
		"another buyer":  buyer,
		"not a token":    event,
		"another key":    event,
		"expired":        event,
		"empty":          event,
		"a payload byte": event,
		"a signature":    event,
	}
	payload, sig, _ := strings.Cut(token, ".")
	flip := func(s string, i int) string {
		c := byte('A')
		if s[i] == 'A' {
			c = 'B'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	other, err := New(testenv.Postgres(t), time.Minute, nil).Sign(ctx, pl, since)
	if err != nil {
		t.Fatal(err)
	}
	old, err := New(db, time.Minute, func() time.Time { return time.Now().Add(-2 * time.Minute) }).Sign(ctx, pl, since)
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{
		"another event":  token,
		"another buyer":  token,
		"not a token":    "hello",
		"another key":    other,
		"expired":        old,
		"empty":          ".",
		"a payload byte": flip(payload, len(payload)/2) + "." + sig,
		"a signature":    payload + "." + flip(sig, 3),
	}
	for what, tok := range tokens {
		ev, b := refused[what], buyer
		switch what {
		case "another event":
			ev = ids.New()
		case "another buyer":
			b = ids.New()
		}
		if _, err := one.Verify(ctx, tok, ev, b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Verify = %v, want ErrInvalid", what, err)
		}
	}
}
