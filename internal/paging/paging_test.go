package paging

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

func TestACursorReadsBackAsItWasGiven(t *testing.T) {
	c := Cursor{At: time.Date(2030, 9, 1, 19, 30, 0, 123456789, time.FixedZone("x", 3600)), ID: ids.New()}
	got, err := Parse(c.String())
	if err != nil || !got.At.Equal(c.At) || got.ID != c.ID {
		t.Errorf("Parse(%q) = %+v, %v; want %+v", c.String(), got, err, c)
	}
	for _, bad := range []string{"x", "!!!", Cursor{At: c.At, ID: "42"}.String(), strings.Repeat("A", 200),
		"MjAzMC0wOS0wMVQxOTozMDowMFo"} {
		if _, err := Parse(bad); !errors.Is(err, errkind.Invalid) {
			t.Errorf("Parse(%q) = %v, want errkind.Invalid", bad, err)
		}
	}
}

func TestLimit(t *testing.T) {
	for in, want := range map[int]int{0: DefaultSize, 1: 1, MaxSize: MaxSize} {
		if got, err := Limit(in); err != nil || got != want {
			t.Errorf("Limit(%d) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []int{-1, MaxSize + 1} {
		if _, err := Limit(bad); !errors.Is(err, errkind.Invalid) {
			t.Errorf("Limit(%d) = %v, want errkind.Invalid", bad, err)
		}
	}
}

func TestCutTellsWhetherAPageFollows(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	place := func(n int) Cursor {
		return Cursor{At: at.Add(time.Duration(n) * time.Hour), ID: "00000000-0000-0000-0000-00000000000" + string(rune('0'+n))}
	}
	page, next := Cut([]int{1, 2, 3}, 2, place)
	if len(page) != 2 || next != place(2).String() {
		t.Errorf("Cut of 3 by 2 = %v, %q; want [1 2] and the place of 2", page, next)
	}
	if page, next := Cut([]int{1, 2}, 2, place); len(page) != 2 || next != "" {
		t.Errorf("Cut of 2 by 2 = %v, %q; want the last page", page, next)
	}
}
