package auth

import (
	"context"
	"strings"
	"testing"
)

func TestDeviceTokensAreBoundToTheirAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	for _, email := range []string{"owner@example.com", "other@example.com"} {
		if _, err := s.Register(ctx, Buyer, email, "0123456789", "A"); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.Login(ctx, "owner@example.com", "0123456789", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.DeviceToken, devicePrefix) || first.DeviceExpiresAt.IsZero() {
		t.Fatalf("login answered device %q until %v", first.DeviceToken, first.DeviceExpiresAt)
	}

	again, err := s.Login(ctx, "owner@example.com", "0123456789", first.DeviceToken)
	if err != nil {
		t.Fatal(err)
	}
	if again.DeviceToken != first.DeviceToken {
		t.Errorf("a login from a known device answered a new device token")
	}
	d, ok, err := s.KnownDevice(ctx, first.DeviceToken, " OWNER@example.com")
	if err != nil || !ok || d.AccountID != first.Principal.AccountID {
		t.Fatalf("KnownDevice(owner) = %+v, %v, %v; want the owner's device", d, ok, err)
	}

	for name, token := range map[string]string{
		"another account's email": first.DeviceToken,
		"a forged token":          devicePrefix + strings.Repeat("A", 43),
		"a malformed token":       "dev_x",
	} {
		email := "owner@example.com"
		if name == "another account's email" {
			email = "other@example.com"
		}
		if _, ok, err := s.KnownDevice(ctx, token, email); ok || err != nil {
			t.Errorf("%s: KnownDevice = %v, %v; want not known", name, ok, err)
		}
	}

	// Presented by another account's login, the owner's token is not kept: that
	// login gets a device of its own.
	other, err := s.Login(ctx, "other@example.com", "0123456789", first.DeviceToken)
	if err != nil {
		t.Fatal(err)
	}
	if other.DeviceToken == first.DeviceToken {
		t.Errorf("another account's login adopted the owner's device token")
	}

	var clear int
	if err := s.store.db.QueryRow(ctx, `SELECT count(*) FROM devices WHERE position($1::bytea in token_hash) > 0`,
		[]byte(first.DeviceToken)).Scan(&clear); err != nil || clear != 0 {
		t.Errorf("the device token itself is stored (%d rows, %v)", clear, err)
	}
}
