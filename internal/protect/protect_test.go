package protect

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The keys are shared by every instance of a deployed fleet: they must stay
// byte for byte what they were (the digest is openssl's SHA-256 of 65 x's,
// base64url without padding).
func TestKeysAreTheFleetsKeys(t *testing.T) {
	long := strings.Repeat("x", MaxIdentityBytes+1)
	for _, c := range []struct{ got, want string }{
		{IdentityKey("sd:", "rl", "hold-buyer", "", "8812"), "sd:rl:{hold-buyer:8812}"},
		{IdentityKey("sd:", "rl", "hold-buyer", "buyer", "8812"), "sd:rl:{buyer:8812}:hold-buyer"},
		{IdentityKey("sd:", "cc", "buyer-concurrency", "", "8812"), "sd:cc:{buyer-concurrency:8812}"},
		{IdentityKey("sd:", "cc", "buyer-concurrency", "buyer", "8812"), "sd:cc:{buyer:8812}:buyer-concurrency"},
		{IdentityKey("", "rl", "login-ip", "", long), "rl:{login-ip:sha256:lTfF_fEgSC99WNJentWD9SwCtOME6oFNsWM61WWu1-k}"},
		{IdentityKey("", "rl", "login-ip", "", long[1:]), "rl:{login-ip:" + long[1:] + "}"},
		{HashTag("buyer", "8812"), "{buyer:8812}"},
		{Key("sd:", "wr", "42", ":q"), "sd:wr:{42}:q"},
		{Key("sd:", "fleet", "usage", ""), "sd:fleet:{usage}"},
	} {
		if c.got != c.want {
			t.Errorf("key %q, want %q", c.got, c.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Enforce, Shadow, Off} {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
		if err := CheckMode(m); err != nil {
			t.Errorf("CheckMode(%q): %v", m, err)
		}
	}
	if err := CheckMode(""); err != nil {
		t.Errorf("CheckMode(\"\"): %v, want nil (Enforce)", err)
	}
	for _, s := range []string{"", "Enforce", "shadowed"} {
		if _, err := ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q) accepted it", s)
		}
	}
	if CheckMode("on") == nil {
		t.Error(`CheckMode("on") accepted it`)
	}
}

func TestModeSwitch(t *testing.T) {
	var s ModeSwitch
	if m := s.Load(); m != Enforce {
		t.Fatalf("zero ModeSwitch is %q, want enforce", m)
	}
	for _, m := range []Mode{Shadow, Off, Enforce} {
		s.Store(m)
		if got := s.Load(); got != m {
			t.Errorf("stored %q, loaded %q", m, got)
		}
	}
	s.Store(Off)
	s.Store("")
	if m := s.Load(); m != Enforce {
		t.Errorf(`after Store(""): %q, want enforce`, m)
	}
	defer func() {
		if recover() == nil {
			t.Error("Store of an unknown mode did not panic")
		}
		if m := s.Load(); m != Enforce {
			t.Errorf("a refused Store changed the mode to %q", m)
		}
	}()
	s.Store("on")
}

// Every calls fn on every tick, one call at a time, and returns when ctx ends.
func TestEveryCallsUntilTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls, running atomic.Int32
	ticked := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		Every(ctx, time.Millisecond, func(fctx context.Context) {
			if running.Add(1) != 1 {
				t.Error("calls overlapped")
			}
			defer running.Add(-1)
			if fctx != ctx {
				t.Error("fn was not given Every's context")
			}
			if calls.Add(1) == 3 {
				close(ticked)
			}
		})
	}()
	select {
	case <-ticked:
	case <-time.After(10 * time.Second):
		t.Fatal("no third call in 10 s of 1 ms ticks")
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return when ctx ended")
	}
	n := calls.Load()
	if n < 3 {
		t.Fatalf("%d calls", n)
	}
}
