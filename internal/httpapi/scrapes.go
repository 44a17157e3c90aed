package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// scrapeMinInterval is the least time between two gatherings of the metrics:
// however many scrape at once, the collectors run at most four times a
// second (Prometheus scrapes every few seconds).
const scrapeMinInterval = 250 * time.Millisecond

// scrapes answers GET /metrics from gatherings shared by every scrape that
// waits for them: a scrape is answered from the first gathering that begins
// after it arrived (so what it reads is never older than its request), the
// gatherings run one at a time, at least minInterval apart, and each is
// encoded once as text and once compressed. A flood of scrapes thus costs a
// few gatherings a second and a copy of bytes each; every scraper waits at
// most minInterval and a gathering.
type scrapes struct {
	gather      prometheus.Gatherer
	logger      *slog.Logger
	minInterval time.Duration

	mu        sync.Mutex
	next      *scrape   // the gathering that scrapes arriving now wait for; nil: none yet
	lastBegan time.Time // when the last gathering began
	running   sync.Mutex
}

// scrape is one gathering, as the scrapes waiting for it are answered.
type scrape struct {
	done     chan struct{}
	text, gz []byte
	err      error
}

var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

func (sc *scrapes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sc.mu.Lock()
	g := sc.next
	if g == nil {
		g = &scrape{done: make(chan struct{})}
		sc.next = g
		go sc.run(g)
	}
	sc.mu.Unlock()
	select {
	case <-g.done:
	case <-r.Context().Done():
		return // the scraper went away
	}
	if g.err != nil {
		http.Error(w, "gathering the metrics failed; retry", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", string(textFormat))
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept-Encoding")
	body := g.text
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = g.gz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// run makes gathering g once the last one is minInterval old and over; the
// scrapes that arrive from its start on wait for the next one.
func (sc *scrapes) run(g *scrape) {
	defer close(g.done)
	sc.running.Lock()
	defer sc.running.Unlock()
	sc.mu.Lock()
	wait := time.Until(sc.lastBegan.Add(sc.minInterval))
	sc.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait) // spacing the gatherings is this loop's purpose
	}
	sc.mu.Lock()
	sc.next = nil
	sc.lastBegan = time.Now()
	sc.mu.Unlock()

	families, err := sc.gather.Gather()
	if err != nil && len(families) == 0 {
		sc.logger.Warn("gathering the metrics failed", "error", err)
		g.err = err
		return
	}
	if err != nil { // some collector failed: the others are still worth having
		sc.logger.Warn("gathering some metrics failed", "error", err)
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, textFormat)
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			sc.logger.Warn("encoding the metrics failed", "error", err)
			g.err = err
			return
		}
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	_, _ = zw.Write(text.Bytes())
	_ = zw.Close()
	g.text, g.gz = text.Bytes(), gz.Bytes()
}
