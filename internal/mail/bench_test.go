package mail_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
	stagemail "github.com/stagedoor/stagedoor/internal/mail"
)

// BenchmarkRender: writing one order's confirmation of two tickets (two QR
// images) as a message.
func BenchmarkRender(b *testing.B) {
	r, err := stagemail.NewRenderer(testFrom, testPublic)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(confirmation("ada@example.com"))
	m := stagemail.Queued{ID: 1, MessageID: ids.New(), Kind: stagemail.KindOrderConfirmed, To: "ada@example.com", Notice: body, CreatedAt: time.Now()}
	for b.Loop() {
		if _, err := r.Render(m); err != nil {
			b.Fatal(err)
		}
	}
}
