package ticketsign

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

func TestSignedCodesVerifyAndNoAlteredCharacterDoes(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)
	ticket, event := ids.New(), ids.New()
	code, err := Sign(priv, ticket, event)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 159 || !strings.HasPrefix(code, Prefix) || strings.Trim(code[3:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		t.Fatalf("code %q (%d characters): want SD1 and 156 of A-Z, 2-7", code, len(code))
	}
	c, err := Verify(pub, code)
	if err != nil || c.TicketID != ticket || c.EventID != event {
		t.Fatalf("Verify = %+v, %v", c, err)
	}
	if c, ok := Parse(code); !ok || c.TicketID != ticket {
		t.Errorf("Parse = %+v, %v", c, ok)
	}
	if _, err := Verify(otherPub, code); !errors.Is(err, ErrBadSignature) {
		t.Errorf("another event's key: %v, want ErrBadSignature", err)
	}

	// Every character of the code, the prefix and the last one included,
	// changed to every other character of the alphabet: never a valid code.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	for i := range len(code) {
		for _, ch := range alphabet + "1" {
			if byte(ch) == code[i] {
				continue
			}
			altered := code[:i] + string(ch) + code[i+1:]
			if c, err := Verify(pub, altered); err == nil {
				t.Fatalf("character %d of %d changed to %c verified, as %+v", i+1, len(code), ch, c)
			}
		}
	}
	for _, bad := range []string{"", "SD1", code[:158], code + "A", "XX1" + code[3:], strings.ToLower(code), "Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"} {
		if _, err := Verify(pub, bad); !errors.Is(err, ErrNotSigned) {
			t.Errorf("Verify(%.20q…) = %v, want ErrNotSigned", bad, err)
		}
	}
}

// TestRespellingsAreNoCodes: the last character of a code carries 4 unused
// bits, so 16 spellings decode to the same 97 bytes. Only the one Sign wrote
// is a code; Parse and Verify refuse the 15 others, and Canonical says which
// code each stands for.
func TestRespellingsAreNoCodes(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	ticket, event := ids.New(), ids.New()
	code, err := Sign(priv, ticket, event)
	if err != nil {
		t.Fatal(err)
	}
	spellings := Respellings(code)
	if len(spellings) != 15 {
		t.Fatalf("%d respellings of %s, want 15", len(spellings), code)
	}
	for _, r := range spellings {
		raw, err := encoding.DecodeString(strings.TrimPrefix(r, Prefix))
		if err != nil || encoding.EncodeToString(raw) != code[len(Prefix):] {
			t.Fatalf("%s is no respelling of the code: Go's decoder reads it as other bytes (%v)", r, err)
		}
		if _, err := Verify(pub, r); !errors.Is(err, ErrNotCanonical) {
			t.Errorf("Verify(respelling …%s) = %v, want ErrNotCanonical", r[150:], err)
		}
		if c, ok := Parse(r); ok {
			t.Errorf("Parse(respelling …%s) = %+v, want not a code", r[150:], c)
		}
		if canon, respelled, ok := Canonical(r); !ok || !respelled || canon != code {
			t.Errorf("Canonical(…%s) = …%s, %v, %v; want the code, respelled", r[150:], canon[150:], respelled, ok)
		}
	}
	if canon, respelled, ok := Canonical(code); !ok || respelled || canon != code {
		t.Errorf("Canonical(code) = %v, %v, %v", canon == code, respelled, ok)
	}
	if _, _, ok := Canonical("Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"); ok {
		t.Error("Canonical of an unsigned code: ok")
	}
}

func TestOneKeyPerEventEvenWhenInstancesRace(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	ctx := context.Background()
	var org, event string
	if err := db.QueryRow(ctx, `INSERT INTO accounts (id, kind, email, name, password_hash)
		VALUES (gen_random_uuid(), 'organizer', 'o@example.com', 'O', 'x') RETURNING id::text`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO events (id, organizer_id, name, venue, starts_at, on_sale_at, currency)
		VALUES (gen_random_uuid(), $1, 'E', 'V', now() + interval '1 day', now(), 'USD') RETURNING id::text`, org).Scan(&event); err != nil {
		t.Fatal(err)
	}
	keys := make([]ed25519.PrivateKey, 20)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := NewKeys(db).Private(ctx, event) // each its own instance
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i, k := range keys {
		if !k.Equal(keys[0]) {
			t.Fatalf("instance %d got another key for the event", i)
		}
	}
	pubs, err := NewKeys(db).Public(ctx, []string{event, ids.New()})
	if err != nil || len(pubs) != 1 || !pubs[0].Key.Equal(keys[0].Public()) {
		t.Fatalf("Public = %+v, %v", pubs, err)
	}
	code, _ := Sign(keys[0], ids.New(), event)
	if _, err := Verify(pubs[0].Key, code); err != nil {
		t.Errorf("a code signed with the stored key does not verify with the stored public key: %v", err)
	}
}
