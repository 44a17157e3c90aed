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

func TestSignedCodesVerifyAndNoAlteredByteDoes(t *testing.T) {
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

	// Every byte of the code, altered: never a valid code.
	raw, _ := encoding.DecodeString(strings.TrimPrefix(code, Prefix))
	for i := range raw {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			altered := append([]byte(nil), raw...)
			altered[i] ^= flip
			if c, err := Verify(pub, Prefix+encoding.EncodeToString(altered)); err == nil {
				t.Fatalf("byte %d ^ %#x verified, as %+v", i, flip, c)
			}
		}
	}
	for _, bad := range []string{"", "SD1", code[:158], code + "A", "XX1" + code[3:], strings.ToLower(code), "Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"} {
		if _, err := Verify(pub, bad); !errors.Is(err, ErrNotSigned) {
			t.Errorf("Verify(%.20q…) = %v, want ErrNotSigned", bad, err)
		}
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
